"""What of a pyramid came from the assisted builder's accepted proposals (issue 30 §2) travels with
its exports: the ``full`` JSON export, and the dataset archive's manifest (version 5), from which an
import marks it again. The archive's .pyr files stay exactly what DUCView writes (the format has no
place for it)."""

import io
import json
import zipfile

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.corpus.models import PeerSummary
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Contributor, Pyramid
from annotation.transfer import ducview_export
from annotation.transfer.archive import ManifestError, read_manifest

from tests.foundation.factories import topic
from tests.transfer.test_archive_round_trip import round_trip

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("in_process_jobs")]


def assisted_pyramid():
    """D0601's pyramid by ann: SCU 1 drawn by hand with one accepted contributor (B), SCU 2 accepted
    whole as a proposed SCU (A and C), SCU 3 by hand."""
    coord, ann = User.objects.create_user("coord"), User.objects.create_user("ann")
    t, refs = topic(
        "D0601",
        "Assisted source",
        A="The dam burst at night. Rain fell.",
        B="At night the dam burst. The town slept.",
        C="Rain fell for days. Nobody was hurt.",
    )
    t.dataset.coordinators.add(coord)
    PeerSummary.objects.create(topic=t, external_id="1", text="The dam burst.")
    pyramid = Pyramid.objects.create(topic=t, creator=ann, status=Pyramid.Status.DONE)
    pyramid.references.set(refs.values())
    burst = SCU.objects.create(pyramid=pyramid, uid=1, label="The dam burst")
    add_contributor(burst, refs["A"], [(0, 22)])
    add_contributor(burst, refs["B"], [(0, 22)], proposed=True)
    rain = SCU.objects.create(pyramid=pyramid, uid=2, label="It rained", proposed=True)
    add_contributor(rain, refs["A"], [(24, 33)], proposed=True)
    add_contributor(rain, refs["C"], [(0, 18)], proposed=True)
    slept = SCU.objects.create(pyramid=pyramid, uid=3, label="The town slept")
    add_contributor(slept, refs["B"], [(24, 38)])
    return t.dataset, coord, pyramid


def provenance(dataset) -> tuple[list, list]:
    scus = SCU.objects.filter(pyramid__topic__dataset=dataset)
    contributors = Contributor.objects.filter(scu__pyramid__topic__dataset=dataset)
    return (
        sorted(scus.filter(proposed=True).values_list("uid", flat=True)),
        sorted(contributors.filter(proposed=True).values_list("scu__uid", "reference__external_id")),
    )


def test_the_archive_carries_accepted_proposals_and_the_import_marks_them_again():
    dataset, coord, pyramid = assisted_pyramid()
    expected = ([2], [(1, "B"), (2, "A"), (2, "C")])
    assert provenance(dataset) == expected

    api = APIClient()
    api.force_authenticate(coord)
    data = b"".join(api.get(reverse("api:dataset-archive", args=[dataset.pk])).streaming_content)
    archive = zipfile.ZipFile(io.BytesIO(data))
    manifest = json.loads(archive.read("manifest.json"))
    [entry] = [e for e in manifest["files"] if e["kind"] == "pyramid"]
    assert manifest["version"] == 5
    assert entry["proposed"] == {"scus": [2], "contributors": [[1, "B"], [2, "A"], [2, "C"]]}

    copy = round_trip(dataset, coord)
    assert provenance(copy) == expected

    # The .pyr is what DUCView writes whatever the provenance: the same bytes with the marks cleared.
    SCU.objects.filter(pyramid=pyramid).update(proposed=False)
    Contributor.objects.filter(scu__pyramid=pyramid).update(proposed=False)
    assert ducview_export.export_pyramid(pyramid) == archive.read(entry["name"])


def test_the_full_export_says_what_was_proposed():
    dataset, coord, pyramid = assisted_pyramid()
    api = APIClient()
    api.force_authenticate(coord)
    document = api.get(f"/api/pyramids/{pyramid.pk}/export/", {"format": "json"}).json()
    names = {r["id"]: r["external_id"] for r in document["references"]}
    assert [(s["uid"], s["proposed"]) for s in document["scus"]] == [(1, False), (2, True), (3, False)]
    marked = sorted(
        (s["uid"], names[c["reference"]]) for s in document["scus"] for c in s["contributors"] if c["proposed"]
    )
    assert marked == [(1, "B"), (2, "A"), (2, "C")]


def test_a_manifest_with_broken_provenance_is_refused():
    entry = {
        "kind": "pyramid",
        "name": "pyramids/D0601.pyr",
        "creator": None,
        "status": "done",
        "created_at": "2026-11-29T07:00:00+00:00",
        "updated_at": "2026-11-29T07:00:00+00:00",
    }
    good = {"version": 5, "files": [{**entry, "proposed": {"scus": [2], "contributors": [[1, "B"]]}}]}
    record = read_manifest(json.dumps(good).encode())["pyramids/D0601.pyr"]
    assert record.proposed.scus == {2} and record.proposed.contributors == {(1, "B")}
    for proposed in ({"scus": ["2"], "contributors": []}, {"scus": [], "contributors": [[1]]}, []):
        with pytest.raises(ManifestError, match="proposed"):
            read_manifest(json.dumps({"version": 5, "files": [{**entry, "proposed": proposed}]}).encode())
    with pytest.raises(ManifestError, match="version 5"):
        read_manifest(json.dumps({**good, "version": 4}).encode())
    assert read_manifest(json.dumps({"version": 4, "files": [entry]}).encode())["pyramids/D0601.pyr"].proposed is None

"""Every path that imports .pan files keeps every match the file's own tool scored: a match whose
label is stale (found nowhere in the peer text, offsets inside it) stays at its stored offsets,
flagged for review, and the stored score equals the file's DUCView 1.5 <score>. Paths: the
``import_ducview`` command, the API's transfer endpoint and the set-up page, each with the file
uploaded as it is and inside a zip."""

import io
import re
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.corpus.models import Dataset
from annotation.formats import parse_peer_annotation, parse_pyramid
from annotation.formats.ducview import EVIDENCE_LOST_NOTE
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.peers.scoring_inputs import load_annotations
from annotation.pyramids.models import SCU
from annotation.pyramids.scoring_inputs import load_pyramids
from annotation.transfer.ducview_import import ImportReport, import_all
from scoring.model import Convention
from scoring.scores import score_peer

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "formats" / "fixtures"
STALE = (FIXTURES / "stale_label_v15.pan").read_bytes()
NAME = "1.D0999.M.100.A.1.pan"
KEPT = "offsets kept, label not found — review"


def _zipped(name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(f"pans/{name}", data)
    return out.getvalue()


def _admin() -> User:
    return User.objects.create_superuser("root", password="x")


def by_command(dataset, tmp_path, zipped):
    (tmp_path / NAME).write_bytes(STALE)
    call_command("import_ducview", str(tmp_path / NAME), dataset=dataset.name, stdout=io.StringIO())
    return None


def by_api(dataset, tmp_path, zipped):
    client = APIClient()
    client.force_authenticate(_admin())
    upload = SimpleUploadedFile("pans.zip", _zipped(NAME, STALE)) if zipped else SimpleUploadedFile(NAME, STALE)
    response = client.post(f"/api/datasets/{dataset.pk}/import/", {"files": [upload]}, format="multipart")
    assert response.status_code == 200, response.content
    return response.json()["kept"]


def by_page(dataset, tmp_path, zipped):
    client = Client()
    client.force_login(_admin())
    upload = SimpleUploadedFile("pans.zip", _zipped(NAME, STALE)) if zipped else SimpleUploadedFile(NAME, STALE)
    response = client.post(reverse("setup:ducview", args=[dataset.pk]), {"files": [upload]})
    assert response.status_code == 200
    page = response.content.decode()
    assert "offsets kept, label not found" in page
    return response.context["report"].kept


@pytest.mark.parametrize(
    ("path", "zipped"),
    [(by_command, False), (by_api, False), (by_api, True), (by_page, False), (by_page, True)],
    ids=["command", "api-file", "api-zip", "page-file", "page-zip"],
)  # the command reads folders, not zips
def test_every_import_path_keeps_the_stale_labelled_match_and_the_files_score(path, zipped, tmp_path):
    dataset = Dataset.objects.create(name="stale")
    kept = path(dataset, tmp_path, zipped)
    annotation = PeerAnnotation.objects.get(pyramid__topic__dataset=dataset)
    flagged = PeerMatch.objects.get(annotation=annotation, scu__uid=4)
    assert flagged.review_note == KEPT
    assert [annotation.peer.text[p.start : p.end] for p in flagged.parts.all()] == ["The parade was cancelled"]
    if kept is not None:
        assert len(kept) == 1 and "SCU 4" in kept[0] and "The closing parade was called off" in kept[0]
    pyramid = load_pyramids([annotation.pyramid_id])[annotation.pyramid_id]
    ours = score_peer(pyramid, load_annotations([annotation.pk])[annotation.pk], Convention.NIST)
    theirs = parse_peer_annotation(STALE)[0].score  # what DUCView computed and wrote into the file
    assert (ours.size, ours.matched_scus, ours.observed_weight, round(ours.modified, 4)) == (
        int(theirs["totalscu"]),
        int(theirs["uniquescu"]),
        int(theirs["totalWeight"]),
        float(theirs["coverageScore"]),
    )


def test_a_dropped_contributor_is_reported_once_per_import_and_a_reimport_says_already_present():
    # SCU 7's only part lies outside the text and its label is nowhere: the contributor goes.
    # Both .pan files and the .pyr carry that pyramid; the report says it once, in one entry.
    pyr = (
        (FIXTURES / "event.pyr")
        .read_bytes()
        .replace(b'label="Nobody was hurt" start="175" end="190"', b'label="Nobody at all" start="900175" end="900190"')
    )
    pan = (
        (FIXTURES / "event.pan")
        .read_bytes()
        .replace(b'label="Nobody was hurt" start="175" end="190"', b'label="Nobody at all" start="900175" end="900190"')
    )
    assert pan != (FIXTURES / "event.pan").read_bytes()
    files = [("D0999.pyr", pyr), ("1.D0999.M.100.A.1.pan", pan), ("1.D0999.M.100.A.2.pan", pan)]
    dataset = Dataset.objects.create(name="once")
    report = ImportReport()
    import_all(files, dataset, report)
    assert report.rejected == [] and len(report.unplaced) == 1, report.unplaced
    assert "SCU 7" in report.unplaced[0] and "contributor left out" in report.unplaced[0]
    assert [o["status"] for o in report.outcomes] == ["imported"] * 3

    again = ImportReport()
    import_all(files, dataset, again)
    assert (again.pyramids_created, again.pyramids_reused, again.annotations_created, again.annotations_existing) == (
        0,
        1,
        0,
        2,
    )
    assert [o["status"] for o in again.outcomes] == ["already present"] * 3  # as the summary says
    assert again.unplaced == [] and again.kept == []  # nothing of it was written again


def test_pyramid_contributors_whose_labels_are_stale_keep_their_scus_weights(tmp_path):
    data = (FIXTURES / "event_repairs.pyr").read_bytes()
    (tmp_path / "D0999.pyr").write_bytes(data)
    call_command("import_ducview", str(tmp_path / "D0999.pyr"), dataset="weights", stdout=io.StringIO())
    stored = {
        scu.uid: [c.review_note for c in scu.contributors.all()]
        for scu in SCU.objects.filter(pyramid__topic__dataset__name="weights")
    }
    # Independently: the contributors the file lists under each SCU (SCU 70's part in a header goes,
    # not the contributor).
    in_file = {
        int(uid): len(re.findall(r"<contributor ", body))
        for uid, body in re.findall(r'<scu uid="(\d+)"[^>]*>(.*?)</scu>', data.decode(), re.S)
    }
    assert {uid: len(notes) for uid, notes in stored.items()} == in_file
    assert stored[25] == stored[40] == [KEPT] and stored[4] == [""]
    assert {s.uid: s.weight for s in parse_pyramid(data)[0].scus} == in_file


def test_a_match_without_evidence_survives_the_pan_download_and_the_dataset_archive():
    """SCU 4's only part moved outside the text (its label nowhere): imported, the match stays
    without evidence, flagged; its annotation's .pan download and the dataset archive both carry
    it, so each re-imported copy keeps it and scores as the file's own tool did."""
    stale = STALE.replace(b'start="119" end="143"', b'start="900" end="924"')
    dataset = Dataset.objects.create(name="no evidence")
    import_all([(NAME, stale)], dataset, ImportReport())
    client = APIClient()
    admin = _admin()
    client.force_authenticate(admin)
    annotation = PeerAnnotation.objects.get(pyramid__topic__dataset=dataset)
    pan = client.get(f"/api/annotations/{annotation.pk}/export/?format=ducview")
    assert pan.status_code == 200, pan.content
    archive = client.get(reverse("api:dataset-archive", args=[dataset.pk]))
    assert archive.status_code == 200
    copies = {
        "pan": (NAME, b"".join(pan.streaming_content) if pan.streaming else pan.content),
        "archive": ("archive.zip", b"".join(archive.streaming_content)),
    }
    theirs = parse_peer_annotation(STALE)[0].score
    for how, (name, data) in [("source", (NAME, None)), *copies.items()]:
        if data is not None:
            dataset = Dataset.objects.create(name=f"copy by {how}")
            report = client.post(
                f"/api/datasets/{dataset.pk}/import/", {"files": [SimpleUploadedFile(name, data)]}, format="multipart"
            ).json()
            assert report["rejected"] == [] and report["annotations_created"] == 1, (how, report)
        annotation = PeerAnnotation.objects.get(pyramid__topic__dataset=dataset)
        flagged = PeerMatch.objects.get(annotation=annotation, scu__uid=4)
        assert (list(flagged.parts.all()), flagged.review_note) == ([], EVIDENCE_LOST_NOTE), how
        pyramid = load_pyramids([annotation.pyramid_id])[annotation.pyramid_id]
        ours = score_peer(pyramid, load_annotations([annotation.pk])[annotation.pk], Convention.NIST)
        assert (ours.size, ours.matched_scus, ours.observed_weight, round(ours.modified, 4)) == (
            int(theirs["totalscu"]),
            int(theirs["uniquescu"]),
            int(theirs["totalWeight"]),
            float(theirs["coverageScore"]),
        ), how

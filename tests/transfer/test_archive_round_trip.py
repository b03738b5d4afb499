"""A dataset exported as its archive and uploaded into a new dataset gives back every table the
app offers, equal: scores (both conventions, with and without unfinished annotations, peers and
references), agreement, statistics, charts, meta-evaluation, the management commands' exports and
the overview's progress figures. Only the dataset's name and database ids (the tiers chart's pyramid
column) may differ.

What makes this hard is what a .pan cannot say: an annotation that was only opened (empty,
unfinished) must come back unfinished and empty, not as a finished annotation scored 0.0; an
unfinished one with matches must stay unfinished; a finished empty one (a real 0) must stay
finished; annotators keep their names and annotations their times.
"""

import io
import json
import zipfile
from datetime import UTC
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.adjudication.models import Adjudication, PyramidAdjudication
from annotation.api.renderers import CSVRenderer
from annotation.corpus.models import Dataset, PeerSummary
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids import construction
from annotation.pyramids.models import SCU

from tests.conftest import shared_data
from tests.dashboards.every_table import EXPORTS, NOT_ABOUT_PEER_ANNOTATIONS, tables
from tests.dashboards.helpers import adjudicated, build_lived_in, build_toy, coordinator_of, opened, url_patterns

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("in_process_jobs"),
]  # the dashboards computed as a worker would, in the test


def test_every_csv_download_is_compared():
    """A new CSV download must be compared here (``csv_exports``) or be about something else than peer annotations."""
    offered = set()
    for name, pattern in url_patterns():
        callback = pattern.callback
        renderers = getattr(callback, "initkwargs", {}).get("renderer_classes") or ()
        if ("csv" in str(pattern.pattern) or CSVRenderer in renderers) and not name.startswith(
            NOT_ABOUT_PEER_ANNOTATIONS
        ):
            offered.add(name)
    assert offered == EXPORTS


def archive_of(dataset):
    """The dataset's archive as a new coordinator of it downloads it: (their API client, them, the zip)."""
    coordinator = coordinator_of(dataset)
    api = APIClient()
    api.force_authenticate(coordinator)
    return (
        api,
        coordinator,
        zipfile.ZipFile(
            io.BytesIO(b"".join(api.get(reverse("api:dataset-archive", args=[dataset.pk])).streaming_content))
        ),
    )


def own_names(data: bytes) -> list[str]:
    """``NAME=NAME`` for every name the archive's manifest gives (annotators, creators, adjudicators):
    the importing coordinator attributing the work to the accounts of the same names."""
    names = set()
    for entry in json.loads(zipfile.ZipFile(io.BytesIO(data)).read("manifest.json"))["files"]:
        names |= {entry.get("annotator"), entry.get("creator"), (entry.get("adjudication") or {}).get("adjudicator")}
    return [f"{name}={name}" for name in sorted(names - {None})]


def round_trip(dataset, coordinator) -> Dataset:
    """The dataset's archive (the API's download) uploaded into a new dataset (the API's import) by
    the same coordinators, each name of the archive attributed to the account of that name."""
    api = APIClient()
    api.force_authenticate(coordinator)
    response = api.get(reverse("api:dataset-archive", args=[dataset.pk]))
    assert response.status_code == 200
    data = b"".join(response.streaming_content)
    copy = Dataset.objects.create(name="Round-trip copy")
    copy.coordinators.set(dataset.coordinators.all())
    answer = api.post(
        reverse("api:dataset-import", args=[copy.pk]),
        {"files": [SimpleUploadedFile("archive.zip", data)], "users": "\n".join(own_names(data))},
        format="multipart",
    )
    assert answer.status_code == 200, answer.content[:2000]
    report = answer.json()
    assert (
        report["adjudications_restored"]
        == Adjudication.objects.filter(annotation__pyramid__topic__dataset=dataset).count()
    )
    assert (
        report["pyramid_adjudications_restored"] == PyramidAdjudication.objects.filter(topic__dataset=dataset).count()
    )
    assert (
        report["rejected"] == []
        and report["annotations_created"] == PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset).count()
    )
    assert not any("manifest" in note for note in report["repairs"]), report["repairs"]
    return copy


def annotations(dataset) -> list[tuple]:
    return sorted(
        PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset).values_list(
            "peer__topic__external_id", "peer__external_id", "annotator__username", "status", "created_at", "updated_at"
        ),
        key=lambda row: (row[:2], row[2] or "", row[3:]),
    )  # an adjudicated version has no annotator


def construction_computed(dataset) -> list[dict]:
    """The construction agreement of the dataset's topics, computed as the background job does
    (a test's commits run no job), and its stored pairs."""
    construction.recompute_topics(dataset.topics.values_list("pk", flat=True))
    return [pair for agreement in construction.stored(dataset.topics.all()) for pair in agreement.values["pairs"]]


def assert_same(dataset, coordinator) -> None:
    compared = construction_computed(dataset)
    before = tables(dataset, coordinator)
    copy = round_trip(dataset, coordinator)
    assert len(construction_computed(copy)) == len(compared)
    after = tables(copy, coordinator)
    assert after.keys() == before.keys()
    for key in before:
        assert after[key] == before[key], key
    assert annotations(copy) == annotations(dataset), "status, annotator and times come back"


def test_round_trip_of_unfinished_empty_and_doubly_annotated_peers():
    dataset = build_lived_in("Round-trip source")
    adjudicated = PeerAnnotation.objects.get(pyramid__topic__dataset=dataset, adjudication__isnull=False)
    pairs = construction_computed(dataset)
    assert len(pairs) == 2, "T2 and T3 have two pyramids by two annotators each (T3's adjudicated one stays out)"
    assert_same(dataset, coordinator_of(dataset))
    # The adjudication itself: same sources (by annotator), decisions naming the new sources, adjudicator, times.
    [copy] = Adjudication.objects.filter(annotation__pyramid__topic__dataset__name="Round-trip copy")
    original = adjudicated.adjudication
    assert copy.annotation.annotator is None and copy.annotation.peer.external_id == "1"
    by_name = {s.annotator.username: str(s.pk) for s in copy.sources.all()}
    assert sorted(by_name) == sorted(s.annotator.username for s in original.sources.all()) == ["ann1", "ann2"]
    assert copy.decisions == {"3": by_name["ann1"], "non_matching": "neither"}
    assert copy.adjudicator.username == "judge" and (copy.created_at, copy.updated_at) == (
        original.created_at,
        original.updated_at,
    )
    assert copy.source_revisions == {pk: s.revision for s in copy.sources.all() for pk in [str(s.pk)]}, (
        "no source shows as changed"
    )
    # Scores of T3 rest on the adjudicated pyramid in both
    # (ann1's annotation; ann2's against ann6's pyramid does not count).
    for name in ("Round-trip source", "Round-trip copy"):
        stdout = StringIO()
        call_command("export_scores", dataset=name, format="csv", stdout=stdout)
        t3 = [line for line in stdout.getvalue().splitlines() if ",T3," in line]
        assert t3 and all("pyramid: adjudicated" in line for line in t3) and not any("ann2" in line for line in t3), t3
    # The adjudicated pyramid of T3: same sources (by creator, A first), decisions, uids, adjudicator, times.
    original, [restored] = (
        PyramidAdjudication.objects.get(topic__dataset=dataset),
        PyramidAdjudication.objects.filter(topic__dataset__name="Round-trip copy"),
    )
    assert restored.pyramid.creator is None and restored.topic.external_id == "T3"
    assert (
        [p.creator.username for p in restored.sources.order_by("pk")]
        == [p.creator.username for p in original.sources.order_by("pk")]
        == ["ann6", "ann7"]
    )
    assert (restored.decisions, restored.uids) == (original.decisions, original.uids) and original.decisions
    assert restored.adjudicator.username == "judge" and (restored.created_at, restored.updated_at) == (
        original.created_at,
        original.updated_at,
    )
    assert restored.changed_sources() == [] and original.changed_sources() == []
    assert {s.uid for s in restored.pyramid.scus.all()} == set(original.uids.values())


def test_an_adjudication_whose_source_changed_since_comes_back_so(tmp_path):
    """A source annotation edited after the adjudication is shown as changed on the adjudication
    page; after the round trip (the command line's path in) it still is, and scores rest on the
    adjudicated version in both."""
    from annotation.adjudication import services

    dataset = build_toy("Changed source")
    peer = dataset.topics.get(external_id="T1").peersummarys.get(external_id="1")
    adjudicated(peer, "judge", {"3": "both"})
    ann2 = PeerAnnotation.objects.get(peer=peer, annotator__username="ann2")
    add_match(ann2, SCU.objects.get(pyramid=ann2.pyramid, uid=2), [(30, 34)])  # after the adjudication
    pyramid = peer.topic.pyramids.get()
    assert services.adjudicated_version(peer, pyramid).adjudication.changed_sources(
        services.compare(peer, pyramid)
    ) == ["ann2"]
    api = APIClient()
    api.force_authenticate(coordinator_of(dataset))
    path = tmp_path / "changed.zip"
    path.write_bytes(b"".join(api.get(reverse("api:dataset-archive", args=[dataset.pk])).streaming_content))
    manifest = json.loads(zipfile.ZipFile(path).read("manifest.json"))
    [entry] = [e for e in manifest["files"] if "adjudication" in e]
    assert entry["annotator"] is None and len(entry["adjudication"]["sources"]) == 2
    assert entry["adjudication"]["changed"] == [
        e["name"] for e in manifest["files"] if e.get("annotator") == "ann2" and e.get("peer") == "1"
    ]
    Dataset.objects.create(name="Changed copy").coordinators.set(dataset.coordinators.all())
    call_command(
        "import_ducview", str(path), dataset="Changed copy", map_user=own_names(path.read_bytes()), stdout=StringIO()
    )
    copy = Dataset.objects.get(name="Changed copy").topics.get(external_id="T1")
    version = services.adjudicated_version(copy.peersummarys.get(external_id="1"), copy.pyramids.get())
    assert version.adjudication.changed_sources(services.compare(version.peer, version.pyramid)) == ["ann2"]
    exports = []
    for name in ("Changed source", "Changed copy"):
        stdout = StringIO()
        call_command("export_scores", dataset=name, format="csv", stdout=stdout)
        exports.append(stdout.getvalue().replace(name, "<dataset>"))
    assert exports[0] == exports[1] and ",adjudicated," in exports[0]


def test_an_adjudication_whose_source_file_is_missing_is_said_and_not_restored():
    dataset = build_toy("Missing source")
    peer = dataset.topics.get(external_id="T1").peersummarys.get(external_id="1")
    adjudicated(peer, "judge", {"3": "ann1"})
    api, coordinator, source = archive_of(dataset)
    manifest = json.loads(source.read("manifest.json"))
    [entry] = [e for e in manifest["files"] if "adjudication" in e]
    gone = entry["adjudication"]["sources"][1]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in source.namelist():
            if name != gone:
                archive.writestr(name, source.read(name))
    copy = Dataset.objects.create(name="Missing source copy")
    copy.coordinators.add(coordinator)
    report = api.post(
        reverse("api:dataset-import", args=[copy.pk]),
        {"files": [SimpleUploadedFile("a.zip", out.getvalue())]},
        format="multipart",
    ).json()
    assert report["adjudications_restored"] == 0
    assert any(entry["name"] in r and "adjudication was not restored" in r and gone in r for r in report["repairs"]), (
        report["repairs"]
    )
    assert not Adjudication.objects.filter(annotation__pyramid__topic__dataset=copy).exists()
    assert (
        PeerAnnotation.objects.filter(
            pyramid__topic__dataset=copy, annotator__isnull=True, peer__external_id="1"
        ).count()
        == 1
    )


@pytest.mark.parametrize("named", ["ann1", "ann6", "nobody"])
def test_an_archive_makes_only_a_coordinator_the_adjudicator(named):
    """A crafted manifest naming an annotator (or an unknown name) as adjudicator: both kinds of
    adjudication come back, scores resting on them, but without adjudicator, and the report says why.
    Only coordinators adjudicate; an archive is a file anyone can write."""
    dataset = build_lived_in("Forged adjudicator")
    api, coordinator, source = archive_of(dataset)
    manifest = json.loads(source.read("manifest.json"))
    entries = [e for e in manifest["files"] if "adjudication" in e]
    assert sorted(e["kind"] for e in entries) == ["annotation", "pyramid"]
    for entry in entries:
        assert entry["adjudication"]["adjudicator"] == "judge"
        entry["adjudication"]["adjudicator"] = named
    copy = Dataset.objects.create(name="Forged adjudicator copy")
    copy.coordinators.add(coordinator)
    mapped = [] if named == "nobody" else [f"{named}={named}"]  # an account of that name, attributed explicitly
    report = api.post(
        reverse("api:dataset-import", args=[copy.pk]),
        {"files": [SimpleUploadedFile("a.zip", with_manifest(source, manifest))], "users": ",".join(mapped)},
        format="multipart",
    ).json()
    assert (report["adjudications_restored"], report["pyramid_adjudications_restored"]) == (1, 1), report
    why = "is mapped to no account here" if named == "nobody" else "is no coordinator of this dataset"
    assert sum(f"its adjudicator {named!r} {why}" in r for r in report["repairs"]) == 2, report["repairs"]
    assert Adjudication.objects.get(annotation__pyramid__topic__dataset=copy).adjudicator is None
    assert PyramidAdjudication.objects.get(topic__dataset=copy).adjudicator is None


def test_the_import_report_says_how_many_adjudications_came_back():
    from django.template.loader import render_to_string

    from annotation.transfer.ducview_import import ImportReport

    html = render_to_string(
        "setup/_import_report.html", {"report": ImportReport(files=3, adjudications_restored=2), "dataset": {"pk": 1}}
    )
    assert "2 adjudicated versions restored with their decisions: scores rest on them" in html
    assert "data-adjudications-restored" not in render_to_string(
        "setup/_import_report.html", {"report": ImportReport(files=3), "dataset": {"pk": 1}}
    )


def test_import_ducview_reads_the_archive_as_its_upload_does(tmp_path):
    """The command line is another path in: the same dataset as the upload gives."""
    dataset = build_toy("Command source")
    t1 = dataset.topics.get(external_id="T1")
    PeerSummary.objects.create(topic=t1, external_id="4", text="word " * 20)
    opened(t1, "ann1", "4")
    api = APIClient()
    api.force_authenticate(coordinator_of(dataset))
    path = tmp_path / "source.zip"
    path.write_bytes(b"".join(api.get(reverse("api:dataset-archive", args=[dataset.pk])).streaming_content))
    call_command(
        "import_ducview", str(path), dataset="Command copy", map_user=own_names(path.read_bytes()), stdout=StringIO()
    )
    assert annotations(Dataset.objects.get(name="Command copy")) == annotations(dataset)
    exports = []
    for name in ("Command source", "Command copy"):
        stdout = StringIO()
        call_command("export_scores", dataset=name, format="csv", include_unfinished=True, stdout=stdout)
        exports.append(stdout.getvalue().replace(name, "<dataset>"))
    assert exports[0] == exports[1]
    with pytest.raises(CommandError, match="on its own"):
        call_command("import_ducview", str(path), str(tmp_path), dataset="Mixed", stdout=StringIO())


@pytest.mark.realdata
def test_round_trip_of_duc_2006():
    """All of DUC 2006 (462 finished annotations, 5 of them empty: real zeros), plus what the app
    adds: a peer only opened by a new annotator, and an annotation of D0631 (annotated twice) reopened."""
    path = shared_data("duc2006")
    call_command(
        "import_ducview", str(path / "allpyramids"), str(path / "allpans"), dataset="DUC 2006 source", stdout=StringIO()
    )
    dataset = Dataset.objects.get(name="DUC 2006 source")
    d0631 = dataset.topics.get(external_id="D0631")
    opened(d0631, "300", "10")
    reopened = PeerAnnotation.objects.get(peer__topic=d0631, peer__external_id="14", annotator__username="115")
    reopened.status = "in_progress"
    reopened.save()
    assert (
        PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset, matches__isnull=True, status="done").count() == 5
    )
    assert_same(dataset, coordinator_of(dataset))


def test_an_archive_without_the_new_fields_imports_with_the_documented_default():
    """Version 1 (no status in the manifest): done when its scores.csv lists the annotation's score,
    else in progress; the annotators' names from the manifest."""
    dataset = build_toy("Old archive")
    t1 = dataset.topics.get(external_id="T1")
    PeerSummary.objects.create(topic=t1, external_id="4", text="word " * 20)
    opened(t1, "ann1", "4")
    coordinator = coordinator_of(dataset)
    api = APIClient()
    api.force_authenticate(coordinator)
    data = b"".join(api.get(reverse("api:dataset-archive", args=[dataset.pk])).streaming_content)
    source = zipfile.ZipFile(io.BytesIO(data))
    manifest = json.loads(source.read("manifest.json"))
    del manifest["version"]
    for entry in manifest["files"]:
        for key in ("status", "created_at", "updated_at", "matches", "non_matching", "empty"):
            entry.pop(key, None)
    copy = Dataset.objects.create(name="Old archive copy")
    copy.coordinators.add(coordinator)
    data = with_manifest(source, manifest)
    answer = api.post(
        reverse("api:dataset-import", args=[copy.pk]),
        {"files": [SimpleUploadedFile("old.zip", data)], "users": ",".join(own_names(data))},
        format="multipart",
    )
    assert answer.status_code == 200, answer.content
    assert [row[:4] for row in annotations(copy)] == [row[:4] for row in annotations(dataset)]


def with_manifest(source: zipfile.ZipFile, manifest: dict) -> bytes:
    """The archive ``source`` with ``manifest`` as its manifest.json."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in source.namelist():
            archive.writestr(name, json.dumps(manifest) if name == "manifest.json" else source.read(name))
    return out.getvalue()


ADJUDICATION = {
    "adjudicator": "judge",
    "sources": [],
    "changed": [],
    "decisions": {},
    "created_at": "2026-01-01T00:00:00+00:00",
    "updated_at": "2026-01-01T00:00:00+00:00",
}


PYRAMID_ADJUDICATION = ADJUDICATION | {"sources": ["a.pyr", "b.pyr"], "decisions": {"a4": "drop"}, "uids": {"m1-1": 1}}


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda m: m.update(version=7), "version '7'"),
        (lambda m: m["files"][2].update(status="finished"), "files[2]: status 'finished'"),
        (lambda m: m["files"][2].update(created_at="yesterday"), "files[2]: created_at must be an ISO 8601"),
        (lambda m: m["files"][2].update(matches=-1), "files[2]: matches must be a count"),
        (lambda m: m.update(files="none"), "no list of files"),
        (lambda m: m["files"][0].update(source=["D0601.pyr"]), "files[0]: source must be a text"),
        (
            lambda m: m["files"][2].update(
                adjudication=ADJUDICATION | {"sources": [m["files"][3]["name"], m["files"][4]["name"]]}
            ),
            "an adjudicated version is nobody's own work",
        ),
        (
            lambda m: m["files"][2].update(
                annotator=None, adjudication=ADJUDICATION | {"sources": ["nope.pan", "x.pan"]}
            ),
            "settles 'nope.pan', which is no annotator's annotation in the archive",
        ),
        (
            lambda m: m["files"][2].update(
                annotator=None,
                adjudication=ADJUDICATION
                | {"sources": [m["files"][3]["name"], m["files"][4]["name"]], "decisions": {"1": "ann9"}},
            ),
            "decisions must map each item to one of its sources",
        ),
        # the adjudicated pyramid (version 4): files[0] and files[1] are the pyramids of T1 and T2
        (
            lambda m: m["files"][0].update(
                creator="ann1", adjudication=PYRAMID_ADJUDICATION | {"sources": ["a.pyr", "b.pyr"]}
            ),
            "files[0]: an adjudicated pyramid is nobody's own work",
        ),
        (
            lambda m: m["files"][0].update(adjudication=PYRAMID_ADJUDICATION | {"sources": ["nope.pyr", "x.pyr"]}),
            "settles 'nope.pyr', which is no other pyramid in the archive",
        ),
        (
            lambda m: m["files"][0].update(
                adjudication=PYRAMID_ADJUDICATION | {"sources": [m["files"][2]["name"], m["files"][3]["name"]]}
            ),
            "which is no other pyramid in the archive",
        ),
        (
            lambda m: m["files"][0].update(
                adjudication=PYRAMID_ADJUDICATION | {"sources": [m["files"][0]["name"], "x.pyr"]}
            ),
            "which is no other pyramid in the archive",
        ),
        (
            lambda m: m["files"][0].update(
                adjudication=PYRAMID_ADJUDICATION | {"sources": [m["files"][1]["name"], "x.pyr"]}
            ),
            "a pyramid of another topic",
        ),
        (
            lambda m: m["files"][0].update(adjudication=PYRAMID_ADJUDICATION | {"sources": ["a.pyr"]}),
            "sources must list the paths of the two pyramids",
        ),
        (
            lambda m: m["files"][0].update(adjudication=PYRAMID_ADJUDICATION | {"uids": {"a1": 0}}),
            "uids must map each item",
        ),
        (
            lambda m: m["files"][0].update(adjudication=PYRAMID_ADJUDICATION | {"changed": ["c.pyr"]}),
            "changed must list some of its sources",
        ),
        (
            lambda m: m["files"][0].update(adjudication=PYRAMID_ADJUDICATION | {"updated_at": None}),
            "adjudication: updated_at must be an ISO 8601",
        ),
        (lambda m: m["files"][0].update(adjudication=[]), "files[0], adjudication must be an object"),
        (
            lambda m: (m.update(version=3), m["files"][0].update(adjudication=PYRAMID_ADJUDICATION)),
            "described from version 4 on",
        ),
    ],
)
def test_a_manifest_that_cannot_be_read_refuses_the_upload(change, message):
    dataset = build_toy("Bad manifest")
    api, coordinator, source = archive_of(dataset)
    manifest = json.loads(source.read("manifest.json"))
    assert manifest["files"][2]["kind"] == "annotation"
    change(manifest)
    copy = Dataset.objects.create(name="Bad manifest copy")
    copy.coordinators.add(coordinator)
    answer = api.post(
        reverse("api:dataset-import", args=[copy.pk]),
        {"files": [SimpleUploadedFile("bad.zip", with_manifest(source, manifest))]},
        format="multipart",
    )
    assert answer.status_code == 400 and message in json.dumps(answer.json()), answer.content
    assert not copy.topics.exists(), "nothing is imported"


def test_an_adjudicated_pyramid_whose_source_is_missing_is_said_and_not_restored():
    """A source pyramid's file gone from the archive: the adjudicated pyramid comes back as a
    pyramid without creator (said in the repairs), never the topic's adjudicated pyramid."""
    dataset = build_lived_in("Missing pyramid")
    api, coordinator, source = archive_of(dataset)
    manifest = json.loads(source.read("manifest.json"))
    assert manifest["version"] == 5
    [entry] = [e for e in manifest["files"] if e["kind"] == "pyramid" and "adjudication" in e]
    assert entry["creator"] is None and entry["topic"] == "T3" and len(entry["adjudication"]["sources"]) == 2
    gone = entry["adjudication"]["sources"][1]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in source.namelist():
            if name != gone and not name.startswith(gone.rsplit("/", 1)[0].replace("pyramids/", "pans/") + "/"):
                archive.writestr(name, source.read(name))
    copy = Dataset.objects.create(name="Missing pyramid copy")
    copy.coordinators.add(coordinator)
    report = api.post(
        reverse("api:dataset-import", args=[copy.pk]),
        {"files": [SimpleUploadedFile("a.zip", out.getvalue())]},
        format="multipart",
    ).json()
    assert report["pyramid_adjudications_restored"] == 0
    assert any(
        entry["name"] in r and "pyramid adjudication was not restored" in r and gone in r for r in report["repairs"]
    ), report["repairs"]
    assert not PyramidAdjudication.objects.filter(topic__dataset=copy).exists()
    assert copy.topics.get(external_id="T3").pyramids.filter(creator__isnull=True).count() == 1


def test_the_import_report_says_how_many_adjudicated_pyramids_came_back():
    from django.template.loader import render_to_string

    from annotation.transfer.ducview_import import ImportReport

    html = render_to_string(
        "setup/_import_report.html",
        {"report": ImportReport(files=3, pyramid_adjudications_restored=1), "dataset": {"pk": 1}},
    )
    assert "1 adjudicated pyramid restored with its decisions: its topic&#x27;s scores rest on it" in html
    assert "pyramid-adjudications-restored" not in render_to_string(
        "setup/_import_report.html", {"report": ImportReport(files=3), "dataset": {"pk": 1}}
    )


def test_an_adjudicated_pyramid_is_never_attached_to_a_pyramid_with_a_creator():
    """The import (``restore_pyramid_adjudications``) finds the .pyr's stored pyramid; one with a
    creator (e.g. an identical pyramid already present, reused) is someone's own work: refused and
    said; the same record on the pyramid without creator is restored (the control)."""
    from datetime import datetime

    from annotation.transfer.archive import Archived, ArchivedPyramidAdjudication
    from annotation.transfer.ducview_import import ImportReport, restore_pyramid_adjudications

    dataset = build_lived_in("Creator")
    t3 = dataset.topics.get(external_id="T3")
    record = PyramidAdjudication.objects.get(topic=t3)
    adjudicated_one, (ann6, ann7) = record.pyramid, sorted(record.sources.all(), key=lambda p: p.pk)
    record.delete()
    moment = datetime(2026, 1, 1, tzinfo=UTC)

    def attempt(target, sources):
        report = ImportReport(
            outcomes=[
                {"file": f"{p.pk}.pyr", "kind": "pyr", "status": "imported", "pyramid": p.pk}
                for p in (target, *sources)
            ]
        )
        wanted = ArchivedPyramidAdjudication(
            "judge", tuple(f"{p.pk}.pyr" for p in sources), frozenset(), (("a4", "a"),), (("a4", 4),), moment, moment
        )
        restore_pyramid_adjudications(
            dataset,
            report,
            {f"{target.pk}.pyr": Archived("done", None, moment, moment, pyramid_adjudication=wanted, topic="T3")},
        )
        return report

    report = attempt(ann6, [ann7, adjudicated_one])
    assert report.pyramid_adjudications_restored == 0 and not PyramidAdjudication.objects.filter(topic=t3).exists()
    assert any("has a creator" in r for r in report.repairs), report.repairs
    report = attempt(adjudicated_one, [ann6, ann7])
    assert report.pyramid_adjudications_restored == 1 and report.repairs == []
    restored = PyramidAdjudication.objects.get(topic=t3)
    assert restored.pyramid == adjudicated_one and restored.decisions == {"a4": "a"} and restored.created_at == moment
    assert attempt(adjudicated_one, [ann6, ann7]).pyramid_adjudications_restored == 0, (
        "an archive imported twice: left as it is"
    )


def test_an_archive_without_a_source_pyramid_leaves_the_adjudication_out_and_says_so():
    """Writing only some pyramids: the adjudicated one whose sources are not both written carries
    no ``adjudication`` and is listed under ``skipped`` with the reason."""
    from annotation.pyramids.models import Pyramid
    from annotation.transfer.archive import write_archive

    dataset = build_lived_in("Partial")
    record = PyramidAdjudication.objects.get(topic__dataset=dataset)
    left_out = max(p.pk for p in record.sources.all())
    manifest = write_archive(
        io.BytesIO(),
        dataset,
        Pyramid.objects.filter(topic__dataset=dataset).exclude(pk=left_out),
        PeerAnnotation.objects.none(),
    )
    [entry] = [e for e in manifest["files"] if e["kind"] == "pyramid" and e["id"] == record.pyramid_id]
    assert "adjudication" not in entry
    [skipped] = [s for s in manifest["skipped"] if s["kind"] == "pyramid adjudication"]
    assert skipped["name"] == entry["name"] and str(left_out) in skipped["reason"]
    full = write_archive(
        io.BytesIO(), dataset, Pyramid.objects.filter(topic__dataset=dataset), PeerAnnotation.objects.none()
    )
    assert [e["id"] for e in full["files"] if "adjudication" in e] == [record.pyramid_id]

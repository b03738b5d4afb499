"""Imports write the peer annotations of a batch of files together (``import_all``): the result
is what importing the files one by one gives, a file rejected inside a batch leaves nothing, and
rows the database itself refuses reject only their file (the batch is redone file by file)."""

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection

from annotation.corpus.models import Dataset, PeerSummary, Topic
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.transfer.ducview_import import ImportReport, find_files, import_all, import_file

from tests.conftest import shared_data

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "formats" / "fixtures"
PYR = (FIXTURES / "event.pyr").read_bytes()
PAN = (FIXTURES / "event.pan").read_bytes()


def batched(files, dataset="batched", batch_size=50) -> ImportReport:
    report = ImportReport()
    import_all(files, Dataset.objects.get_or_create(name=dataset)[0], report, batch_size=batch_size)
    return report


def one_by_one(files, dataset="single") -> ImportReport:
    report = ImportReport()
    for name, data in files:
        import_file(
            name,
            data if isinstance(data, bytes) else data.read_bytes(),
            Dataset.objects.get_or_create(name=dataset)[0],
            report,
        )
    return report


def stored(dataset: str) -> list:
    """Everything an import writes about peers and their annotations, without database ids."""
    rows = []
    for annotation in PeerAnnotation.objects.filter(peer__topic__dataset__name=dataset).select_related(
        "peer__topic", "annotator"
    ):
        matches = sorted(
            (m.scu.uid if m.scu_id else 0, tuple(sorted((p.start, p.end) for p in m.parts.all())))
            for m in annotation.matches.select_related("scu").prefetch_related("parts")
        )
        peer = annotation.peer
        rows.append(
            (
                peer.topic.external_id,
                peer.external_id,
                peer.system_id,
                peer.text,
                annotation.annotator.username,
                annotation.status,
                annotation.revision,
                annotation.source,
                tuple(matches),
            )
        )
    return sorted(rows)


def test_a_batch_writes_what_importing_file_by_file_writes():
    files = [("D0999.pyr", PYR)] + [(f"{n % 3 + 1}.D0999.M.100.A.{n:02d}.pan", PAN) for n in range(1, 12)]
    files.append(("1.D0999.M.100.A.1.pan", PAN))  # peer 01 by annotator 1 again, written as 1: already present
    files.append(("2.D0999.M.100.A.01.pan", PAN))  # peer 01 by another annotator: a second annotation of one peer
    whole = batched(files, batch_size=5)  # batches end inside runs of one peer
    single = one_by_one(files)
    assert stored("batched") == stored("single") and len(stored("batched")) == 12
    assert [(o["file"], o["status"]) for o in whole.outcomes] == [(o["file"], o["status"]) for o in single.outcomes]
    assert (whole.annotations_created, whole.annotations_existing, whole.rejected) == (12, 1, [])
    assert PeerSummary.objects.filter(topic__dataset__name="batched").count() == 11
    assert Topic.objects.get(dataset__name="batched").revision > 0  # agreement marked stale


@pytest.mark.realdata
def test_a_real_topic_batched_equals_file_by_file():
    data = shared_data("duc2006")
    files = [
        (path.name, path) for path in find_files([data]) if ".D0603." in path.name or path.name.startswith("D0603")
    ]
    assert len(files) > 20
    whole = batched(files, batch_size=7)
    single = one_by_one(files)
    assert not whole.rejected and whole.annotations_created == single.annotations_created > 20
    assert stored("batched") == stored("single")


def test_a_file_rejected_inside_a_batch_leaves_no_peer(settings):
    settings.IMPORT_MAX_NEW_ANNOTATORS = 2
    report = batched([("D0999.pyr", PYR)] + [(f"{n}.D0999.M.100.A.{n}.pan", PAN) for n in range(1, 5)])
    assert [o["status"] for o in report.outcomes] == ["imported", "imported", "imported", "rejected", "rejected"]
    assert sorted(PeerSummary.objects.values_list("external_id", flat=True)) == [
        "1",
        "2",
    ]  # peers 3 and 4 were never written
    assert PeerAnnotation.objects.count() == 2 and report.annotations_created == 2


def refuse_peer(external_id: str) -> None:
    """A database trigger that refuses to insert that peer: a constraint no check of the importer knows."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "CREATE FUNCTION test_refuse_peer() RETURNS trigger AS $$ BEGIN "
                f"IF NEW.external_id = '{external_id}' THEN RAISE EXCEPTION 'peer refused by a test trigger'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                "CREATE TRIGGER test_refuse_peer BEFORE INSERT ON annotation_peersummary "
                "FOR EACH ROW EXECUTE FUNCTION test_refuse_peer()"
            )
        else:
            cursor.execute(
                f"CREATE TRIGGER test_refuse_peer BEFORE INSERT ON annotation_peersummary WHEN NEW.external_id = "
                f"'{external_id}' BEGIN SELECT RAISE(ABORT, 'peer refused by a test trigger'); END"
            )


def test_rows_the_database_refuses_reject_only_their_file():
    refuse_peer("02")
    users_before = User.objects.count()
    files = [("D0999.pyr", PYR)] + [(f"{n}.D0999.M.100.A.0{n}.pan", PAN) for n in (1, 2, 3)]
    report = batched(files)
    assert [(o["file"], o["status"]) for o in report.outcomes] == [
        ("D0999.pyr", "imported"),
        ("1.D0999.M.100.A.01.pan", "imported"),
        ("2.D0999.M.100.A.02.pan", "rejected"),
        ("3.D0999.M.100.A.03.pan", "imported"),
    ]
    assert (
        len(report.rejected) == 1
        and "the database refused it" in report.rejected[0]
        and "test trigger" in report.rejected[0]
    )
    # The report counts each file once (the batch was redone, not added to), and holds what is stored.
    assert (report.files, report.pyramids_created, report.annotations_created) == (4, 1, 2)
    assert report.annotators_created == ["1", "3"] and User.objects.count() == users_before + 2
    assert sorted(PeerSummary.objects.values_list("external_id", flat=True)) == ["01", "03"]
    assert (
        PeerAnnotation.objects.count() == 2
        and PeerMatch.objects.filter(annotation__peer__external_id="02").count() == 0
    )
    assert all(a.matches.exists() for a in PeerAnnotation.objects.all())

"""Who annotated each peer, where a release says it: the file name's leading number (DUC 2006),
else an annotator table (DUC 2007's annotator-table.txt, or any TOPIC [PEER] ANNOTATOR table), else
unknown; two annotators' files of one peer are never merged into one annotator."""

import io
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.corpus.models import Dataset
from annotation.formats import AnnotatorTableError, NameOptions, parse_annotator_table
from annotation.peers.models import PeerAnnotation
from annotation.transfer.ducview_import import ImportReport, import_all

from tests.conftest import shared_data

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "formats" / "fixtures"
PAN = (FIXTURES / "event.pan").read_bytes()
# The same peer and pyramid, other matches (another annotator did not see the repetition).
OTHER = PAN.replace(
    b"""  <contributor label="a storm also flattened tents" comment="same storm, second mention">
   <part label="a storm also flattened tents" start="89" end="117"/>
  </contributor>
""",
    b"",
)
assert OTHER != PAN


def run(files, table=None):
    report, dataset = ImportReport(), Dataset.objects.get_or_create(name="who")[0]
    import_all(files, dataset, report, NameOptions(annotators=parse_annotator_table(table.encode()) if table else None))
    return report


def annotators_of_peer_1():
    return sorted(
        (a.annotator.username if a.annotator else None, a.source)
        for a in PeerAnnotation.objects.filter(peer__external_id="1")
    )


def test_two_annotators_named_by_their_files_stay_two_whatever_the_table_says():
    report = run([("114.D0999.M.100.A.1.pan", PAN), ("115.D0999.M.100.A.1.pan", OTHER)], "D0999 114\n")
    assert report.rejected == []
    assert annotators_of_peer_1() == [("114", "114.D0999.M.100.A.1.pan"), ("115", "115.D0999.M.100.A.1.pan")]
    assert [(o["annotator"], o["annotator_from"]) for o in report.outcomes] == [
        ("114", "file name"),
        ("115", "file name"),
    ]
    assert any(
        "the file name says annotator 115, the annotator table says 114: used the file name" in r
        for r in report.repairs
    )


def test_two_files_of_one_peer_that_name_no_annotator_are_never_merged():
    # Same names in two folders, no annotator in them: the table names one for the topic, so the
    # second file, with other matches, would be silently folded into the first annotator's.
    report = run([("a/D0999.M.100.A.1.pan", PAN), ("b/D0999.M.100.A.1.pan", OTHER)], "D0999 114\n")
    assert annotators_of_peer_1() == [("114", "a/D0999.M.100.A.1.pan")]
    assert [o["status"] for o in report.outcomes] == ["imported", "rejected"]
    assert "never merged" in report.rejected[0] and "annotator 114" in report.rejected[0]
    # Unknown annotators too; the very same file again is 'already present'.
    report = run([("D0998.M.100.A.1.pan", PAN), ("x/D0998.M.100.A.1.pan", PAN), ("y/D0998.M.100.A.1.pan", OTHER)])
    assert [o["status"] for o in report.outcomes] == ["imported", "already present", "rejected"]
    assert "an unknown annotator" in report.rejected[0]


def test_a_table_names_the_annotator_per_topic_or_per_peer():
    report = run(
        [("D0999.M.100.A.1.pan", PAN), ("D0999.M.100.A.2.pan", PAN)],
        "topic\tpeer\tannotator\nD0999\t01\t201\nD0999\t2\t202\n",
    )
    assert [(o["peer"], o["annotator"], o["annotator_from"]) for o in report.outcomes] == [
        ("1", "201", "annotator table"),
        ("2", "202", "annotator table"),
    ]


def test_without_anything_saying_it_the_annotator_is_unknown():
    report = run([("D0999.M.100.A.1.pan", PAN)], "D0001 114\n")
    assert [(o["annotator"], o["annotator_from"]) for o in report.outcomes] == [(None, None)]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("D0701 101 102 103\n", "line 1: 4 fields; expected TOPIC ANNOTATOR or TOPIC PEER ANNOTATOR"),
        ("D0701 101\n\nD0702 1 102\n", "line 3: 3 fields, where line 1 has 2"),
        ("Topic\tPyramid-creator\n", "line 1: the header names no annotator column"),
        ("D0701 101\nD0701 102\n", "line 2: topic D0701 is given annotator 102, line 1 gave 101"),
        ("D0701 1 101\nD0701 01 102\n", "line 2: peer 01 of topic D0701 is given annotator 102, line 1 gave 101"),
        ("D0701 <script>\n", "line 1: '<script>' is not an annotator name"),
        ("# nothing\n\n", "no row"),
    ],
)
def test_table_errors_name_the_line(table, message):
    with pytest.raises(AnnotatorTableError, match=message.replace("(", r"\(")):
        parse_annotator_table(table.encode(), "t.txt")


def test_table_size_is_bounded():
    with pytest.raises(AnnotatorTableError, match="over the limit"):
        parse_annotator_table(b"D0701 101\n" * 200_000)


def test_duc2007_annotator_table_reads_as_it_is():
    path = shared_data("duc2007-main", "annotator-table.txt")
    table = parse_annotator_table(path.read_bytes())
    # independently: the rows' first and last fields
    rows = [line.split() for line in path.read_text().splitlines()[1:] if line.strip()]
    assert {(t, table.annotator(t, "1")) for t, *_ in rows} == {(t, a) for t, *_, a in rows}


def test_command_option_and_upload_field(tmp_path):
    (tmp_path / "table.csv").write_text("topic,annotator\nD0999,301\n")
    (tmp_path / "D0999.M.100.A.1.pan").write_bytes(PAN)
    call_command(
        "import_ducview",
        str(tmp_path / "D0999.M.100.A.1.pan"),
        dataset="cmd",
        annotators=str(tmp_path / "table.csv"),
        stdout=io.StringIO(),
    )
    assert PeerAnnotation.objects.get(pyramid__topic__dataset__name="cmd").annotator.username == "301"
    (tmp_path / "bad.txt").write_text("D0999 301 1 2 3\n")
    with pytest.raises(CommandError, match="bad.txt, line 1: 5 fields"):
        call_command(
            "import_ducview", str(tmp_path), dataset="cmd", annotators=str(tmp_path / "bad.txt"), stdout=io.StringIO()
        )

    client = Client()
    client.force_login(User.objects.create_superuser("root", password="x"))
    dataset = Dataset.objects.create(name="page")
    url = reverse("setup:ducview", args=[dataset.pk])
    bad = client.post(
        url,
        {
            "files": [SimpleUploadedFile("D0999.M.100.A.1.pan", PAN)],
            "annotators": SimpleUploadedFile("who.tsv", b"D0999\t1\t2\t3\t4\n"),
        },
    )
    assert bad.status_code == 400 and "who.tsv, line 1: 5 fields" in bad.content.decode()
    assert not PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset).exists()
    ok = client.post(
        url,
        {
            "files": [SimpleUploadedFile("D0999.M.100.A.1.pan", PAN)],
            "annotators": SimpleUploadedFile(
                "who.tsv", b"Topic\tPyramid-creator\tPeer-annotator\n\nD0999\t101\t\t302\n"
            ),
        },
    )
    assert ok.status_code == 200
    assert PeerAnnotation.objects.get(pyramid__topic__dataset=dataset).annotator.username == "302"

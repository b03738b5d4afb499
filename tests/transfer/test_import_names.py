"""Importing DUCView files: names are hints, peers keep their ids as written, imported annotators
cannot log in and are bounded per import, every file's fate is reported, ids too long for their
columns are refused with the reason."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.corpus.models import Dataset, PeerSummary, Topic
from annotation.corpus.roles import IMPORTED_ANNOTATOR
from annotation.formats import NameOptions
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid
from annotation.transfer.ducview_import import ImportReport, import_file, import_paths

from tests.conftest import shared_data

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "formats" / "fixtures"
PYR = (FIXTURES / "event.pyr").read_bytes()
PAN = (FIXTURES / "event.pan").read_bytes()
# The same files with headers that name no topic (same length: the offsets stay right).
PAN_NO_TOPIC = PAN.replace(b"T0001.M.100.A.", b"T0001_M_100_A_")


def run_import(files, options=None, dataset="names"):
    report = ImportReport()
    ds = Dataset.objects.get_or_create(name=dataset)[0]
    for name, data in files:
        import_file(name, data, ds, report, options=options)
    return report


def fates(report):
    return [
        (
            o["file"],
            o["status"],
            o.get("topic"),
            o.get("topic_from"),
            o.get("peer"),
            o.get("peer_from"),
            o.get("annotator"),
            o.get("annotator_from"),
        )
        for o in report.outcomes
    ]


def test_names_come_from_the_nist_name_then_content_then_options_then_stem():
    report = run_import(
        [
            ("3.D0999.M.100.A.01.pan", PAN),  # NIST name: everything from it
            ("renamed.pan", PAN),  # content gives the topic, the stem the peer
            ("no-topic.pan", PAN_NO_TOPIC),  # nothing in the content: options, then stem
        ],
        NameOptions(topic=None, annotator="7", peer=None),
    )
    assert fates(report) == [
        ("3.D0999.M.100.A.01.pan", "imported", "D0999", "file name", "01", "file name", "3", "file name"),
        ("renamed.pan", "imported", "T0001", "content", "renamed", "file stem", "7", "option"),
        ("no-topic.pan", "imported", "no-topic", "file stem", "no-topic", "file stem", "7", "option"),
    ]
    report = run_import([("other.pan", PAN_NO_TOPIC)], NameOptions(topic="T0002", annotator=None, peer="12"))
    assert fates(report) == [("other.pan", "imported", "T0002", "option", "12", "option", None, None)]
    assert report.sources_line() == "topic: 1 option; peer: 1 option"


def test_peer_ids_stay_as_written_and_match_as_numbers():
    report = run_import([("1.D0999.M.100.A.01.pan", PAN), ("2.D0999.M.100.A.1.pan", PAN)])
    assert not report.rejected and report.annotations_created == 2
    peer = PeerSummary.objects.get(topic__external_id="D0999")
    assert peer.external_id == "01"
    assert sorted(a.annotator.username for a in peer.annotations.all()) == ["1", "2"]
    out = StringIO()
    call_command("export_scores", dataset="names", format="json", stdout=out)
    assert {r["summary"] for r in json.loads(out.getvalue()) if r["kind"] == "peer"} == {"01"}


def test_imported_annotators_cannot_log_in():
    run_import([("5.D0999.M.100.A.1.pan", PAN)])
    user = User.objects.get(username="5")
    assert not user.is_active and not user.has_usable_password()
    assert list(user.groups.values_list("name", flat=True)) == [IMPORTED_ANNOTATOR]
    assert "cannot log in" in user.last_name
    login = Client().post("/accounts/login/", {"username": "5", "password": ""})
    assert login.status_code == 200 and "_auth_user_id" not in login.wsgi_request.session  # the form again, no session
    response = Client().post("/api/auth/token/", {"username": "5", "password": ""}, content_type="application/json")
    assert response.status_code == 400


def test_existing_users_are_reused_not_recreated():
    alice = User.objects.create_user("alice", password="pw")
    report = run_import([("x.pan", PAN)], NameOptions(annotator="alice"))
    assert report.annotators_created == [] and PeerAnnotation.objects.get().annotator == alice


def test_new_annotators_per_import_are_bounded(settings):
    settings.IMPORT_MAX_NEW_ANNOTATORS = 2
    users = User.objects.count()
    report = run_import([(f"{n}.D0999.M.100.A.{n}.pan", PAN) for n in range(1, 6)])
    assert report.annotators_created == ["1", "2"] and User.objects.count() == users + 2
    assert [o["status"] for o in report.outcomes] == ["imported", "imported", "rejected", "rejected", "rejected"]
    assert "IMPORT_MAX_NEW_ANNOTATORS" in report.rejected[0] and report.rejected[0].startswith(
        "3.D0999.M.100.A.3.pan: "
    )
    assert PeerAnnotation.objects.count() == 2


def test_ids_longer_than_their_columns_are_refused_with_the_reason():
    long_stem = "p" * 150
    report = run_import([(f"{long_stem}.pan", PAN_NO_TOPIC), ("ok.pan", PAN)])
    assert [o["status"] for o in report.outcomes] == ["rejected", "imported"]
    assert "longer than 100 characters" in report.rejected[0] and "--topic" in report.rejected[0]
    assert not Topic.objects.filter(external_id=long_stem).exists()


def test_command_options_and_verbose_report_list_every_file(tmp_path):
    (tmp_path / "a.pan").write_bytes(PAN_NO_TOPIC)
    (tmp_path / "b.pyr").write_bytes(PYR.replace(b'<scu uid="4"', b'<scu uid="-4"', 1))
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match="1 file\\(s\\) rejected"):
        call_command(
            "import_ducview",
            str(tmp_path),
            topic="T7",
            peer="9",
            annotator="ann",
            verbose_report=True,
            stdout=out,
            stderr=err,
        )
    text = out.getvalue()
    assert "a.pan: imported; topic T7 (option), peer 9 (option), annotator ann (option)" in text
    assert "b.pyr: rejected — pyramid <scu> 2: uid -4 is out of range" in text
    assert "rejected b.pyr: pyramid <scu> 2: uid -4 is out of range" in err.getvalue()


def test_a_pyramid_file_named_pan_imports_as_a_pyramid():
    report = run_import([("D0999.pan", PYR)])
    assert fates(report) == [("D0999.pan", "imported", "T0001", "content", None, None, None, None)]
    assert [o["kind"] for o in report.outcomes] == ["pyr"]
    assert Pyramid.objects.count() == 1 and not report.rejected


@pytest.mark.realdata
def test_pyreval_pyramids_with_free_names_all_import():
    report = import_paths([shared_data("pyreval-matter")], "pyreval")
    assert (report.files, report.rejected, report.pyramids_created) == (6, [], 6)
    sources = {o["file"]: (o["topic"], o["topic_from"]) for o in report.outcomes}
    assert sources["D0601.pyr"] == ("D0601", "file name")
    assert sources["Becky_MATTER.pyr"] == ("Becky_MATTER", "file stem")

"""Import -> export -> import gives the same model and the same scores; bad files write nothing."""

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Dataset
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import score_rows
from annotation.pyramids.models import Pyramid
from annotation.transfer.ducview_export import export_annotation, export_pyramid
from annotation.transfer.ducview_import import ImportReport, _canonical_db_pyramid, import_file
from scoring.model import Convention

from tests.conftest import shared_data

pytestmark = pytest.mark.django_db

FIXTURES = __import__("pathlib").Path(__file__).resolve().parent.parent / "formats" / "fixtures"


def import_bytes(name, data, dataset_name):
    report = ImportReport()
    import_file(name, data, Dataset.objects.get_or_create(name=dataset_name)[0], report)
    return report


def assert_same(first: str, second: str):
    a = Pyramid.objects.get(topic__dataset__name=first)
    b = Pyramid.objects.get(topic__dataset__name=second)
    assert _canonical_db_pyramid(a) == _canonical_db_pyramid(b)
    assert dict(a.topic.referencesummarys.values_list("external_id", "text")) == dict(
        b.topic.referencesummarys.values_list("external_id", "text")
    )
    for convention in Convention:
        rows = [score_rows(Dataset.objects.get(name=n).topics.all(), convention) for n in (first, second)]
        strip = [[{k: v for k, v in r.items() if k != "dataset"} for r in rs] for rs in rows]
        assert strip[0] == strip[1]


@pytest.mark.realdata
@pytest.mark.parametrize("annotation_file", ["114.D0631.M.250.D.10.pan", "100.D0601.M.250.A.24.pan"])
def test_real_files_round_trip(annotation_file):
    path = shared_data("duc2006", "allpans", annotation_file)
    first = import_bytes(path.name, path.read_bytes(), "first")
    assert not first.rejected
    annotation = PeerAnnotation.objects.get(peer__topic__dataset__name="first")
    second = import_bytes(path.name, export_annotation(annotation), "second")
    assert not second.rejected and not second.unplaced
    assert_same("first", "second")
    assert PeerAnnotation.objects.get(peer__topic__dataset__name="second").annotator == annotation.annotator
    # A pyramid export alone attaches to the identical pyramid: nothing new.
    topic = annotation.peer.topic.external_id
    again = import_bytes(f"{topic}.pyr", export_pyramid(annotation.pyramid), "second")
    assert again.pyramids_reused == 1 and Pyramid.objects.filter(topic__dataset__name="second").count() == 1


def test_malformed_and_hostile_files_write_nothing():
    good = next(FIXTURES.glob("*.pan"), None)
    if good is None:
        pytest.skip("the format fixtures are missing")
    before = (Pyramid.objects.count(), PeerAnnotation.objects.count(), User.objects.count())
    hostile = b'<?xml version="1.0"?><!DOCTYPE p [<!ENTITY x SYSTEM "file:///etc/passwd">]><pyramid><text><line>&x;</line></text></pyramid>'
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b '
        b'"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><pyramid><text><line>&b;</line></text></pyramid>'
    )
    truncated = good.read_bytes()[: len(good.read_bytes()) // 2]
    for name, data in [("D0999.pyr", hostile), ("D0999.pyr", bomb), ("1.D0999.M.100.A.1.pan", truncated)]:
        report = import_bytes(name, data, "hostile")
        assert len(report.rejected) == 1, (name, report.rejected)
    assert (Pyramid.objects.count(), PeerAnnotation.objects.count(), User.objects.count()) == before


def test_oversized_file_is_rejected(settings):
    settings.IMPORT_MAX_BYTES = 1000
    report = import_bytes("D0999.pyr", b"<pyramid>" + b" " * 2000 + b"</pyramid>", "big")
    assert report.rejected and "D0999.pyr" in report.rejected[0]
    assert not Pyramid.objects.exists()

"""bench/_release.py: the benches that replay an expert's work read any DUCView release laid out as
allpyramids/ + allpans/, whatever its file names, as the importer reads it, into a dataset named after
the release (issue 30: ``reproduce_expert.py --data`` stopped on ``D0711-A-ABCF.pyr`` and named its
dataset after ``--dataset``)."""

import sys
from pathlib import Path

import pytest

from annotation.corpus.models import PeerSummary, Topic
from annotation.transfer.ducview_import import import_paths

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import _release  # noqa: E402

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[1] / "formats" / "fixtures"


def _as_topic(data: bytes, topic: str) -> bytes:
    """The fixture's files about topic ``topic`` (5 characters, as T0001: the offsets stay right)."""
    assert len(topic) == 5
    return data.replace(b"T0001", topic.encode()).replace(b")T[0-9]", b")D[0-9]")


def made_up_release(folder: Path) -> Path:
    """A release whose names are not DUC 2006/2007 main's: pyramids named topic-cluster-models,
    peer annotations named as TAC's (topic, summary length, assessor, peer)."""
    pyr, pan = (FIXTURES / "event.pyr").read_bytes(), (FIXTURES / "event.pan").read_bytes()
    (folder / "allpyramids").mkdir(parents=True)
    (folder / "allpans").mkdir()
    for topic in ("D0711", "D0712", "D0713"):
        (folder / "allpyramids" / f"{topic}-A-ABCF.pyr").write_bytes(_as_topic(pyr, topic))
        for peer in ("3", "12"):
            (folder / "allpans" / f"{topic}.M.100.A.{peer}.pan").write_bytes(_as_topic(pan, topic))
    return folder


def test_a_release_of_other_names_is_read_as_the_importer_reads_it(tmp_path):
    release = made_up_release(tmp_path / "tac-like-release")
    name = _release.dataset_name(release)
    assert name == "bench-tac-like-release"  # the release's folder, not --dataset
    report = import_paths(_release.release_paths(release), name)
    assert [o for o in report.outcomes if o["status"] == "rejected"] == []
    # The topics come from what the importer stored: the pyramids' headers name them (their file
    # names do not parse as NIST's), the peer annotations' names name theirs.
    assert _release.sample_topics(name, 4) == ["D0711", "D0712", "D0713"]
    assert _release.sample_topics(name, 2) == ["D0711", "D0712"]
    topic = Topic.objects.get(dataset__name=name, external_id="D0711")
    assert topic.pyramids.count() == 1
    assert sorted(PeerSummary.objects.filter(topic=topic).values_list("external_id", flat=True)) == ["12", "3"]
    assert topic.pyramids.get().annotations.count() == 2


def test_a_folder_without_the_release_layout_stops_before_anything_is_written(tmp_path):
    (tmp_path / "allpyramids").mkdir()
    with pytest.raises(SystemExit, match=r"not a DUCView release: no allpans/"):
        _release.release_paths(tmp_path)
    assert _release.release_paths(tmp_path, ("allpyramids",)) == [tmp_path / "allpyramids"]


def test_topics_are_spread_evenly_over_the_sorted_ids():
    assert _release.spread(list("abcdefghij"), 4) == ["a", "c", "f", "h"]
    assert _release.spread(list("ab"), 4) == ["a", "b"]

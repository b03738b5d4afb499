"""Topics from text: splitting by a header pattern as DUCView does, zips named by patterns, the
preview's states (new / already stored / different text), bounds, and all-or-nothing writes."""

import io
import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.corpus import topic_setup
from annotation.corpus.models import PeerSummary, ReferenceSummary, Topic
from annotation.formats.summary_texts import NamePatterns, PatternError, split_by_headers
from annotation.transfer.uploads import Limits

DUC_STYLE = """#2
---------------
D0601.M.250.A.A
---------------
The dam burst at night.
The valley flooded.

---------------\r
D0601.M.250.A.B\r
---------------\r
Engineers blamed the concrete.
"""


def test_split_reads_duc_headers_as_ducview():
    split = split_by_headers(DUC_STYLE)
    assert [(p.id, p.header, p.text) for p in split.pieces] == [
        ("A", "D0601.M.250.A.A", "The dam burst at night.\nThe valley flooded."),
        ("B", "D0601.M.250.A.B", "Engineers blamed the concrete."),
    ]
    assert split.notes == ["text before the first header is not part of any summary: '#2'"]


def test_split_with_a_custom_pattern():
    text = "== 1 ==\nFirst peer.\n== 2 ==\nSecond peer.\n"
    assert [(p.id, p.text) for p in split_by_headers(text, r"^== \d+ ==$").pieces] == [
        ("1", "First peer."),
        ("2", "Second peer."),
    ]


@pytest.mark.parametrize(
    "pattern,message",
    [
        ("", "is empty"),
        ("(unclosed", "not a valid regular expression"),
        ("x" * 1001, "longer than 1000"),
        ("^NOPE$", "matches no header"),
    ],
)
def test_bad_patterns_say_why(pattern, message):
    with pytest.raises(PatternError, match=message):
        split_by_headers(DUC_STYLE, pattern)


def test_a_catastrophic_pattern_is_stopped_by_the_time_limit():
    text = ("aaaa bbb " * 3000) + "\n"
    started = time.thread_time()  # the CPU the limit counts (the machine's load lengthens only the wall clock)
    with pytest.raises(PatternError, match="took longer than 0.2 s"):
        split_by_headers(text, r"(.*a){20}x", timeout=0.2)
    assert time.thread_time() - started < 2


def test_name_patterns_need_topic_and_id_groups():
    with pytest.raises(PatternError, match=r"named group \(\?P<id>"):
        NamePatterns(r"(?P<topic>D\d+)", "")
    named = NamePatterns(
        topic_setup.summary_texts.DEFAULT_REFERENCE_NAMES, topic_setup.summary_texts.DEFAULT_PEER_NAMES
    )
    assert named.classify("x/D0601.M.250.A.A").kind == "reference"
    found = named.classify("D0601A.M.250.A.12")
    assert (found.kind, found.topic, found.id) == ("peer", "D0601", "12")
    assert named.classify("README.txt") is None


def _plan(people, references=DUC_STYLE, peers="---\n1\n---\nA peer.\n---\n2\n---\nAnother peer.", topic="D0602"):
    return topic_setup.plan_topic(
        people.dataset,
        topic,
        "Floods",
        {"reference": references, "peer": peers},
        topic_setup.summary_texts.DEFAULT_HEADER_PATTERN,
    )


def test_plan_then_apply_writes_everything_once(people):
    plan = _plan(people)
    assert plan.ok and plan.new_topics == 1 and (plan.n_references, plan.n_peers) == (2, 2)
    assert not Topic.objects.filter(external_id="D0602").exists(), "planning writes nothing"
    applied = topic_setup.apply(people.dataset, plan)
    assert (applied.topics, applied.references, applied.peers) == (1, 2, 2)
    topic = Topic.objects.get(dataset=people.dataset, external_id="D0602")
    assert topic.title == "Floods"
    assert dict(topic.referencesummarys.values_list("external_id", "text")) == {
        "A": "The dam burst at night.\nThe valley flooded.",
        "B": "Engineers blamed the concrete.",
    }
    assert dict(topic.peersummarys.values_list("external_id", "text")) == {"1": "A peer.", "2": "Another peer."}
    again = _plan(people)
    assert not again.ok and again.count(state="present") == 4 and "nothing to add" in again.notes[-1]


def test_a_different_stored_text_is_a_problem_and_nothing_is_written(people):
    ReferenceSummary.objects.create(topic=people.topic, external_id="B", text="Stored already, differently.")
    plan = _plan(people, topic="D0601")
    assert not plan.ok
    assert plan.problems == [
        "D0601: reference B is already stored with a different text "
        "(stored texts are fixed: give it another id, or delete the stored one first)"
    ]
    with pytest.raises(topic_setup.PlanRejected):
        topic_setup.apply(people.dataset, plan)
    assert people.topic.referencesummarys.count() == 1 and people.topic.peersummarys.count() == 0


def test_apply_rechecks_what_is_stored_inside_its_transaction(people):
    plan = _plan(people, topic="D0601")
    assert plan.ok
    PeerSummary.objects.create(topic=people.topic, external_id="2", text="Written meanwhile.")
    with pytest.raises(topic_setup.PlanRejected, match="peer 2 is already stored"):
        topic_setup.apply(people.dataset, plan)
    assert people.topic.referencesummarys.count() == 0


def test_duplicate_and_empty_summaries_are_problems(people):
    plan = _plan(people, references="---\nA\n---\nOne.\n---\nA\n---\n\n")
    assert any("given twice" in p for p in plan.problems) or any("same header" in p for p in plan.problems)
    plan = _plan(people, references="---\nA\n---\n\n---\nB\n---\nText.")
    assert "D0602: reference 'A' has no text" in plan.problems


def _zip(files: dict[str, bytes]) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return SimpleUploadedFile("summaries.zip", buffer.getvalue(), content_type="application/zip")


def test_zip_of_nist_named_files(people):
    upload = _zip(
        {
            "models/D0602.M.250.A.A": b"Reference A of 602.",
            "models/D0602.M.250.A.C": "R\u00e9f\u00e9rence C.\r\n".encode(),
            "peers/D0602.M.250.A.10": b"Peer ten.",
            "peers/D0602.M.250.A.2": b"Peer two.",
            "peers/D0603.M.250.A.1": b"Another topic's peer.",
            "README.txt": b"not a summary",
            "__MACOSX/._D0602.M.250.A.A": b"junk",
        }
    )
    plan = topic_setup.plan_zip(
        people.dataset,
        upload,
        topic_setup.summary_texts.DEFAULT_REFERENCE_NAMES,
        topic_setup.summary_texts.DEFAULT_PEER_NAMES,
    )
    assert plan.ok, plan.problems
    assert [t.external_id for t in plan.topics] == ["D0602", "D0603"]
    assert [(s.kind, s.id) for s in plan.topics[0].summaries] == [
        ("reference", "A"),
        ("reference", "C"),
        ("peer", "2"),
        ("peer", "10"),
    ]
    assert plan.ignored == ["README.txt"]
    topic_setup.apply(people.dataset, plan)
    assert ReferenceSummary.objects.get(topic__external_id="D0602", external_id="C").text == "R\u00e9f\u00e9rence C."


@pytest.mark.parametrize(
    "files,limits,message",
    [
        ({"../D0602.M.250.A.A": b"x"}, None, "'..' is not allowed"),
        ({"D0602.M.250.A.A": b"x" * 2000}, Limits(1000, 10_000, 10), "larger than"),
        (
            {f"D0602.M.250.A.{i}": b"x" * 900 for i in range(1, 20)},
            Limits(1000, 10_000, 100),
            "decompresses to more than",
        ),
        ({f"D0602.M.250.A.{i}": b"x" for i in range(1, 20)}, Limits(1000, 10_000, 5), "more than 5 entries"),
        ({"inner.zip": b"PK"}, None, "archives inside archives"),
        ({"D0602.M.250.A.A": b"\xff\xfe bad"}, None, "not UTF-8"),
    ],
)
def test_zip_bounds_refuse_and_write_nothing(people, files, limits, message):
    plan = topic_setup.plan_zip(
        people.dataset,
        _zip(files),
        topic_setup.summary_texts.DEFAULT_REFERENCE_NAMES,
        topic_setup.summary_texts.DEFAULT_PEER_NAMES,
        limits=limits,
    )
    assert not plan.ok and any(message in p for p in plan.problems), plan.problems
    assert not Topic.objects.filter(external_id="D0602").exists()


def test_not_a_zip(people):
    upload = SimpleUploadedFile("summaries.zip", b"this is not a zip")
    plan = topic_setup.plan_zip(people.dataset, upload, topic_setup.summary_texts.DEFAULT_REFERENCE_NAMES, "")
    assert plan.problems == ["summaries.zip: not a valid zip archive (File is not a zip file)"]

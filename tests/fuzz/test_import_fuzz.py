"""Property-based fuzzing of the DUCView importer (hypothesis).

Real and hand-made files are mutated as released files and attackers mutate them: truncated,
offsets swapped, negative or huge, attributes removed, encodings changed or broken, SCUs
duplicated, uids out of range, files renamed. Whatever comes in:

* the reader returns a pyramid/annotation with a report, or raises DucViewError with a message;
* the importer never raises; each file is imported (and listed as such) or rejected with a
  reason that is not "unexpected error"; a rejected file writes nothing;
* a clean file's scores do not depend on its name;
* importing files together (a batch writes its peer annotations at its end) stores what importing
  them one by one stores, and gives each file the same fate.

CI runs a bounded number of examples with a fixed seed (about a minute in all); ``make fuzz``
runs many more with fresh randomness (``FUZZ_EXAMPLES``).
"""

import os
import re
from pathlib import Path

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation import formats
from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.peers.results import score_rows
from annotation.pyramids.models import SCU, Contributor, Pyramid
from annotation.transfer.ducview_import import ImportReport, import_all, import_file
from scoring.model import Convention

from tests.conftest import SHARED_DATA

FIXTURES = Path(__file__).resolve().parent.parent / "formats" / "fixtures"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0"))
LONG = EXAMPLES > 0


def _seeds() -> list[tuple[str, bytes]]:
    names = [
        "event.pyr",
        "event.pan",
        "event_repairs.pyr",
        "peer_repairs.pan",
        "event_crlf.pyr",
        "event_noregex.pyr",
        "event_v15.pan",
    ]
    seeds = [(n, (FIXTURES / n).read_bytes()) for n in names]
    real = [
        SHARED_DATA / "duc2006" / "allpans" / "114.D0631.M.250.D.10.pan",
        SHARED_DATA / "duc2007-main" / "allpyramids" / "D0740.pyr",
    ]
    seeds += [(p.name, p.read_bytes()) for p in real if p.exists()]
    return seeds


SEEDS = _seeds()
NUMBER = re.compile(rb'(start|end|uid)="(-?[0-9]+)"')
ATTRIBUTE = re.compile(rb' (label|start|end|uid|comment)="[^"]*"')
SCU_BLOCK = re.compile(rb"<scu .*?</scu>", re.S)

names = st.one_of(
    st.sampled_from(
        [
            "D0999.pyr",
            "1.D0999.M.100.A.1.pan",
            "D0999.M.100.A.01.pan",
            "D0703-A.M.100.A.9.pan",
            "d311i.pyr",
            "renamed.pan",
            "renamed.pyr",
            "x" * 300 + ".pan",
            "über résumé.pan",
            "..pan",
            ".pyr",
            "a.b.c.d.e.f.pan",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\\\x00"), min_size=1, max_size=40).map(
        lambda s: s + ".pan"
    ),
)


@st.composite
def mutated(draw):
    name, data = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(0, 3))):
        data = draw(st.sampled_from(MUTATIONS))(draw, data)
    if draw(st.booleans()):
        name = draw(names)
    return name, data


def truncate(draw, data):
    return data[: draw(st.integers(0, len(data)))]


def change_number(draw, data):
    found = list(NUMBER.finditer(data))
    if not found:
        return data
    m = draw(st.sampled_from(found))
    value = draw(
        st.one_of(
            st.integers(-5, 5), st.integers(-(2**40), 2**40), st.just(2**31), st.just(2**31 - 1), st.integers(0, 2000)
        )
    )
    return data[: m.start(2)] + str(value).encode() + data[m.end(2) :]


def swap_offsets(draw, data):
    return re.sub(
        rb'start="([0-9]+)" end="([0-9]+)"',
        lambda m: b'start="%s" end="%s"' % (m[2], m[1]),
        data,
        count=draw(st.integers(1, 50)),
    )


def remove_attribute(draw, data):
    found = list(ATTRIBUTE.finditer(data))
    if not found:
        return data
    m = draw(st.sampled_from(found))
    return data[: m.start()] + data[m.end() :]


def duplicate_scu(draw, data):
    found = list(SCU_BLOCK.finditer(data))
    if not found:
        return data
    m = draw(st.sampled_from(found))
    return data[: m.end()] + m.group() + data[m.end() :]


def change_encoding(draw, data):
    choice = draw(st.sampled_from(["declare", "utf16", "cp1252", "garbage"]))
    if choice == "declare":
        enc = draw(st.sampled_from([b"foo", b"utf-16", b"latin-1", b"ascii", b"x-mac-roman", b"UTF-8", b""]))
        return re.sub(rb"^<\?xml[^>]*\?>", b'<?xml version="1.0" encoding="' + enc + b'"?>', data, count=1)
    if choice == "utf16":
        return (
            data.decode("utf-8", "replace")
            .replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>')
            .encode("utf-16")
        )
    if choice == "cp1252":
        return data.replace(b"fair", "fa\u00efr".encode("cp1252"))
    at = draw(st.integers(0, len(data)))
    return data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]


def change_label(draw, data):
    found = list(re.finditer(rb' label="([^"]*)"', data))
    if not found:
        return data
    m = draw(st.sampled_from(found))
    label = draw(st.sampled_from([b"", b" ", b"&#233;\xe2\x80\x9cq\xe2\x80\x9d", m[1].upper(), m[1][::-1], m[1] * 3]))
    return data[: m.start(1)] + label + data[m.end(1) :]


MUTATIONS = [truncate, change_number, swap_offsets, remove_attribute, duplicate_scu, change_encoding, change_label]

FORMAT_SETTINGS = settings(
    max_examples=EXAMPLES * 5 or 500,
    deadline=None,
    derandomize=not LONG,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
DB_SETTINGS = settings(
    max_examples=EXAMPLES or 80,
    deadline=None,
    derandomize=not LONG,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)


@FORMAT_SETTINGS
@given(mutated())
def test_the_reader_returns_or_refuses_with_a_message(file):
    name, data = file
    reader = formats.parse_peer_annotation if data.find(b"<peerAnnotation") >= 0 else formats.parse_pyramid
    try:
        parsed, report = reader(data)
    except formats.DucViewError as error:
        assert str(error)
        return
    pyramid = getattr(parsed, "pyramid", parsed)
    for scu in pyramid.scus:
        assert 0 < scu.uid < 2**31 and scu.contributors
        for contributor in scu.contributors:
            for part in contributor.parts:
                assert 0 <= part.start <= part.end <= len(pyramid.reference(part.reference).text)
    for match in getattr(parsed, "matches", []) + getattr(parsed, "non_matching", []):
        assert all(0 <= p.start <= p.end <= len(parsed.text) for p in match.parts)
    assert all(r.message for r in report.repairs + report.rejects)


MODELS = (Topic, ReferenceSummary, PeerSummary, Pyramid, SCU, Contributor, PeerAnnotation, PeerMatch)


def counts():
    return tuple(m.objects.count() for m in MODELS)


@pytest.mark.django_db
@DB_SETTINGS
@given(st.lists(mutated(), min_size=1, max_size=3))
def test_every_file_is_imported_or_rejected_with_a_reason_and_nothing_half_written(files):
    with transaction.atomic():
        dataset = Dataset.objects.create(name="fuzz")
        report = ImportReport()
        for name, data in files:
            before = counts()
            rejected = len(report.rejected)
            import_file(name, data, dataset, report)  # never raises
            outcome = report.outcomes[-1]
            assert outcome["file"] == name and outcome["status"] in ("imported", "already present", "rejected")
            if outcome["status"] == "rejected":
                assert len(report.rejected) == rejected + 1 and outcome["reason"]
                assert "unexpected error" not in outcome["reason"], outcome["reason"]
                assert counts() == before, "a rejected file wrote something"
            else:
                assert len(report.rejected) == rejected
        assert report.files == len(files) == len(report.outcomes)
        transaction.set_rollback(True)


def _scores(dataset_name):
    """The distinct score rows without ids (renamed files may put the pyramid and the peer in two
    topics, when the pyramid's new name is a topic id and the peer's is not: the rows repeat)."""
    rows = score_rows(Dataset.objects.get(name=dataset_name).topics.all(), Convention.NIST)
    return {
        (r["kind"], r["modified"], r["original"], r["matched_scus"], r["repetitions"], r["non_matching"]) for r in rows
    }


@pytest.mark.django_db
@settings(
    max_examples=EXAMPLES // 10 or 8,
    deadline=None,
    derandomize=not LONG,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(names.filter(lambda n: len(n) < 100).map(lambda n: n[:-4]))
def test_a_clean_files_scores_do_not_depend_on_its_name(stem):
    pyr, pan = (FIXTURES / "event.pyr").read_bytes(), (FIXTURES / "event.pan").read_bytes()
    with transaction.atomic():
        for dataset_name, files in (
            ("nist", [("D0999.pyr", pyr), ("1.D0999.M.100.A.1.pan", pan)]),
            ("renamed", [(stem + ".pyr", pyr), (stem + ".pan", pan)]),
        ):
            report = ImportReport()
            for name, data in files:
                import_file(name, data, Dataset.objects.get_or_create(name=dataset_name)[0], report)
            assert not report.rejected, report.rejected
        assert _scores("nist") == _scores("renamed")
        transaction.set_rollback(True)


def _stored(dataset_name):
    """Peers, annotations and matches of a dataset without database ids."""
    return sorted(
        (
            a.peer.topic.external_id,
            a.peer.external_id,
            a.peer.text,
            a.annotator.username if a.annotator_id else "",
            a.status,
            a.revision,
            tuple(
                sorted(
                    (m.scu.uid if m.scu_id else 0, tuple(sorted((p.start, p.end) for p in m.parts.all())))
                    for m in a.matches.all()
                )
            ),
        )
        for a in PeerAnnotation.objects.filter(peer__topic__dataset__name=dataset_name).select_related(
            "peer__topic", "annotator"
        )
    )


@pytest.mark.django_db
@settings(
    max_examples=EXAMPLES // 2 or 30,
    deadline=None,
    derandomize=not LONG,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(st.lists(mutated(), min_size=1, max_size=4), st.integers(1, 3))
def test_a_batch_stores_what_importing_file_by_file_stores(files, batch_size):
    with transaction.atomic():
        together = ImportReport()
        import_all(files, Dataset.objects.create(name="together"), together, batch_size=batch_size)
        one_by_one = ImportReport()
        single = Dataset.objects.create(name="single")
        for name, data in files:
            import_file(name, data, single, one_by_one)
        assert [(o["file"], o["status"], o["reason"]) for o in together.outcomes] == [
            (o["file"], o["status"], o["reason"]) for o in one_by_one.outcomes
        ]
        assert _stored("together") == _stored("single")
        assert (together.annotations_created, together.annotations_existing) == (
            one_by_one.annotations_created,
            one_by_one.annotations_existing,
        )
        transaction.set_rollback(True)

"""Hostile DUCView files are refused fast, with the reason: patterns the file supplies (its
startDocumentRegEx, the searches for mislabelled parts) run under a time bound."""

from __future__ import annotations

import time

import pytest
import regex

from annotation.formats import DucViewError, parse_peer_annotation, parse_pyramid, references
from annotation.formats.bounds import HostileInput, WorkBudget
from annotation.formats.references import DEFAULT_HEADER_REGEX
from annotation.formats.summary_texts import PatternError, split_by_headers

from tests.formats.helpers import fixture_bytes

HEADER = "<pyramid><startDocumentRegEx><![CDATA[{regex}]]></startDocumentRegEx><text>{lines}</text>{scus}</pyramid>"


def pyramid_xml(regex: str, lines: list[str], scus: str = "") -> bytes:
    return HEADER.format(regex=regex, lines="".join(f"<line>{line}</line>" for line in lines), scus=scus).encode()


# The bounds below are of the CPU the parsing thread spends (what the importer's budget counts,
# annotation/formats/bounds.py): a loaded machine lengthens the wall clock, never these.
CATASTROPHIC = "(?m)^" + "[ -]*" * 12 + "[^ -]\\n"  # no quantified group nor back-reference:
# passes the shape check, but backtracks as (length of a line) ** 12 on a line of dashes and blanks


def test_small_catastrophic_header_regex_file_finishes_fast():
    data = pyramid_xml(CATASTROPHIC, ["#1", "- " * 300, "---", "T1.M.100.A.A", "---", "Text."])
    assert len(data) < 1000
    start = time.thread_time()
    try:
        parse_pyramid(data)  # read with the default headers, or refused: either way fast
    except DucViewError:
        pass
    assert time.thread_time() - start < 5


def test_catastrophic_header_regex_is_refused_in_bounded_time():
    data = pyramid_xml(CATASTROPHIC, ["#1", "- " * 1500, "---", "T1.M.100.A.A", "---", "Text."])
    start = time.thread_time()
    with pytest.raises(HostileInput, match="startDocumentRegEx takes more than 0.5 s of CPU"):
        parse_pyramid(data)
    assert time.thread_time() - start < 5  # 0.5 s of budget; the regex package checks coarsely


def test_many_mislabelled_parts_are_refused_in_bounded_time():
    text = ["#1", "---------------", "T0001.M.100.A.A", "---------------", "word " * 200]
    part = '<part label="nowhere to be seen {i}" start="{s}" end="{e}"/>'
    scus = "".join(
        f'<scu uid="{i + 1}" label="x"><contributor '
        f'label="x">{part.format(i=i, s=50 + i % 900, e=60 + i % 900)}</contributor></scu>'
        for i in range(36826)
    )
    start = time.thread_time()
    with pytest.raises(HostileInput, match="locating a label"):
        parse_pyramid(pyramid_xml(r"-+\nT0001\.M\.100\.A\.A\n-+\n", text, scus))
    assert time.thread_time() - start < 15  # XML parsing of 36,826 parts + 0.5 s of searching


def _burn(seconds):
    """Spend ``seconds`` of this thread's CPU (what the budget counts)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_budget_is_shared_by_the_files_of_one_import():
    whole = WorkBudget(0.2)
    timeouts = []

    def hostile(timeout):
        timeouts.append(timeout)
        _burn(timeout)
        raise TimeoutError

    with pytest.raises(HostileInput):
        whole.for_file(10).call("the startDocumentRegEx", hostile)
    assert timeouts[0] == pytest.approx(0.2, abs=0.03)  # regex's timeout is wall-clock: the CPU left
    with pytest.raises(HostileInput, match="this import's time"):
        whole.for_file(10).call("the startDocumentRegEx", lambda timeout: None)


def test_waiting_is_not_work_a_busy_machine_refuses_no_real_file():
    """The budget counts CPU, not the wall clock: a file read while others hold the cores (here:
    this thread descheduled for three budgets' worth of wall time, each wait ending in regex's
    wall-clock timeout) is not refused as hostile: the work is tried again with the CPU left."""
    budget = WorkBudget(0.1)
    attempts = []

    def waits_then_works(timeout):
        attempts.append(timeout)
        if len(attempts) <= 3:
            time.sleep(0.1)
            raise TimeoutError
        return "read"

    assert budget.call("locating a label that does not match its text", waits_then_works) == "read"
    assert len(attempts) == 4 and budget.used < 0.05 and budget.remaining() > 0.05


def _cpu(work):
    """CPU seconds ``work()`` takes (the process's: what a hostile file costs the server)."""
    start = time.process_time()
    work()
    return time.process_time() - start


def test_a_header_pattern_budget_is_the_cpu_it_spends():
    """Issue 24: a "1 s" budget spent 3 s of CPU (regex's wall-clock timeout got 3 x the budget)."""
    text = "- " * 1500 + "\n---\nT1.M.100.A.A\n---\nText."
    cpu = _cpu(lambda: pytest.raises(PatternError, split_by_headers, text, CATASTROPHIC, 1.0))
    assert 0.9 < cpu < 1.4


def test_a_files_budget_is_the_cpu_it_spends():
    data = pyramid_xml(CATASTROPHIC, ["#1", "- " * 1500, "---", "T1.M.100.A.A", "---", "Text."])
    cpu = _cpu(lambda: pytest.raises(HostileInput, parse_pyramid, data, budget=WorkBudget(0.5)))
    assert 0.4 < cpu < 0.8


def test_an_imports_budget_is_the_cpu_all_its_files_spend():
    """Four hostile files of 0.5 s each under one import of 1 s: 1 s of CPU in all, not 4 x 1.5 s."""
    data = pyramid_xml(CATASTROPHIC, ["#1", "- " * 1500, "---", "T1.M.100.A.A", "---", "Text."])
    whole = WorkBudget(1.0)

    def four_files():
        for _ in range(4):
            with pytest.raises(HostileInput):
                parse_pyramid(data, budget=whole.for_file(0.5))

    assert 0.9 < _cpu(four_files) < 1.5


class _InterruptedOnce:
    """A pattern whose first search times out after two matches (the thread waited), as
    ``regex`` does when the wall clock runs out first."""

    def __init__(self, pattern):
        self.pattern, self.interrupted = pattern, False

    def finditer(self, text, pos, timeout):
        for n, match in enumerate(self.pattern.finditer(text, pos, timeout=timeout)):
            if n == 2 and not self.interrupted:
                self.interrupted = True
                raise TimeoutError
            yield match


def test_a_header_search_interrupted_by_waiting_goes_on_where_it_stopped():
    text = "#5\n" + "".join(f"---\nT1.M.100.A.{c}\n---\nText {c}.\n" for c in "ABCDE")
    pattern = regex.compile(DEFAULT_HEADER_REGEX)
    whole = references._blocks(text, pattern, WorkBudget())
    interrupted = _InterruptedOnce(pattern)
    assert references._blocks(text, interrupted, WorkBudget()) == whole and interrupted.interrupted
    assert len(whole) == 5


def _headers(n: int, header: str) -> list[str]:
    return [line for _ in range(n) for line in ("---", header, "---", "Text.")]


def test_a_pasted_text_of_many_headers_is_refused_fast_with_the_bound():
    """Issue 24: 300,000 header lines pasted on the set-up page held a request for 230 s (the
    duplicate check counted every id in the whole list for each id)."""
    text = "\n".join(_headers(30_000, "D0601.M.250.A.A"))
    start = time.thread_time()
    with pytest.raises(PatternError, match=f"more than {references.MAX_HEADERS} headers"):
        split_by_headers(text)
    assert time.thread_time() - start < 3


def test_a_pyr_of_many_headers_is_refused_fast_with_the_bound():
    data = pyramid_xml("", ["#1", *_headers(25_000, "T1.M.100.A.A")])
    start = time.thread_time()
    with pytest.raises(DucViewError, match=f"more than {references.MAX_HEADERS} headers"):
        parse_pyramid(data)
    assert time.thread_time() - start < 5


def test_duplicate_headers_are_found_in_linear_time():
    headers = [f"T1.M.100.A.{i}" for i in range(references.MAX_HEADERS - 1)] + ["T1.M.100.A.7"]
    with pytest.raises(DucViewError, match="same header 'T1.M.100.A.7'"):
        references.reference_ids(headers)
    with pytest.raises(DucViewError, match="more than"):
        references.reference_ids(headers * 2)
    assert references.reference_ids(headers[:-1])[-1] == str(references.MAX_HEADERS - 2)


def test_real_files_spend_little_of_the_budget():
    budget = WorkBudget(10)
    parse_pyramid(fixture_bytes("event_repairs.pyr"), budget=budget)
    assert budget.used < 0.2


@pytest.mark.parametrize("encoding", ["foo", "x-mac-roman", "utf-16", "ebcdic-cp-us"])
def test_unknown_or_wrong_encodings_are_read_with_a_repair(encoding):
    data = fixture_bytes("event.pyr").replace(
        b'<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>'.encode()
    )
    good, _ = parse_pyramid(fixture_bytes("event.pyr"))
    pyramid, report = parse_pyramid(data)
    assert pyramid == good
    assert [r.kind for r in report.repairs] == ["encoding"] and encoding in report.repairs[0].message


def test_bytes_that_are_no_xml_at_all_are_refused_with_the_reason():
    with pytest.raises(DucViewError, match="malformed XML"):
        parse_pyramid(b"\x00\x01\x02 not xml")


# --- embedded pyramids read once per import (``parse_peer_annotation(..., pyramids=memo)``) -------


def _both_ways(files: list[bytes]):
    """Each file read with one memo across them and each read whole: the results, and the memo."""
    memo: dict = {}
    with_memo, whole = [], []
    for data in files:
        for out, kwargs in ((with_memo, {"pyramids": memo}), (whole, {})):
            try:
                out.append(parse_peer_annotation(data, **kwargs))
            except DucViewError as error:
                out.append(str(error))
    return with_memo, whole, memo


def test_an_embedded_pyramid_is_read_once_and_reads_as_the_whole_file():
    pan = fixture_bytes("event.pan")
    other_peer = pan.replace(b"</annotation>", b'<peerscu uid="0" label="x"></peerscu></annotation>')
    with_memo, whole, memo = _both_ways([pan, other_peer, pan])
    assert with_memo == whole and len(memo) == 1


def test_a_memoised_pyramid_never_hides_what_is_wrong_with_the_rest_of_the_file():
    pan = fixture_bytes("event.pan")
    broken = pan.replace(b"</annotation>", b"</annotatio>")
    no_annotation = pan[: pan.index(b"<annotation>")] + b"</peerAnnotation>"
    with_memo, whole, _ = _both_ways([pan, broken, no_annotation])
    assert with_memo == whole
    assert "malformed XML" in with_memo[1] and "no <annotation>" in with_memo[2]


def test_a_pyramid_whose_end_tag_cannot_be_found_in_the_bytes_is_not_memoised():
    # ``</pyramid>`` inside a comment of the pyramid, and an end tag written with a blank: the
    # bytes up to the first ``</pyramid>`` are not the pyramid element, so nothing is memoised.
    pan = fixture_bytes("event.pan")
    in_comment = pan.replace(b"<text>", b"<!-- </pyramid> --><text>", 1)
    blank_end = pan.replace(b"</pyramid>", b"</pyramid >", 1)
    for variant in (in_comment, blank_end):
        with_memo, whole, memo = _both_ways([variant, variant])
        assert with_memo == whole and not isinstance(whole[0], str) and memo == {}


def test_entities_are_refused_with_a_memo_too():
    pan = fixture_bytes("event.pan")
    laughs = pan.replace(b"]>", b'<!ENTITY a "aaaa">]>', 1)
    with_memo, whole, _ = _both_ways([pan, laughs])
    assert with_memo == whole and "forbidden" in with_memo[1]

"""Hostile DUCView files are refused fast, with the reason: patterns the file supplies (its
startDocumentRegEx, the searches for mislabelled parts) run under a time bound."""

from __future__ import annotations

import time

import pytest

from annotation.formats import DucViewError, parse_peer_annotation, parse_pyramid
from annotation.formats.bounds import WALL_SLACK, HostileInput, WorkBudget

from .helpers import fixture_bytes

HEADER = "<pyramid><startDocumentRegEx><![CDATA[{regex}]]></startDocumentRegEx><text>{lines}</text>{scus}</pyramid>"


def pyramid_xml(regex: str, lines: list[str], scus: str = "") -> bytes:
    return HEADER.format(regex=regex, lines="".join(f"<line>{line}</line>" for line in lines), scus=scus).encode()


CATASTROPHIC = "(?m)^" + "[ -]*" * 12 + "[^ -]\\n"  # no quantified group nor back-reference:
# passes the shape check, but backtracks as (length of a line) ** 12 on a line of dashes and blanks


def test_small_catastrophic_header_regex_file_finishes_fast():
    data = pyramid_xml(CATASTROPHIC, ["#1", "- " * 300, "---", "T1.M.100.A.A", "---", "Text."])
    assert len(data) < 1000
    start = time.perf_counter()
    try:
        parse_pyramid(data)  # read with the default headers, or refused: either way fast
    except DucViewError:
        pass
    assert time.perf_counter() - start < 5


def test_catastrophic_header_regex_is_refused_in_bounded_time():
    data = pyramid_xml(CATASTROPHIC, ["#1", "- " * 1500, "---", "T1.M.100.A.A", "---", "Text."])
    start = time.perf_counter()
    with pytest.raises(HostileInput, match="startDocumentRegEx takes more than 0.5 s of CPU"):
        parse_pyramid(data)
    assert time.perf_counter() - start < 5  # 0.5 s of budget; the regex package checks coarsely


def test_many_mislabelled_parts_are_refused_in_bounded_time():
    text = ["#1", "---------------", "T0001.M.100.A.A", "---------------", "word " * 200]
    part = '<part label="nowhere to be seen {i}" start="{s}" end="{e}"/>'
    scus = "".join(
        f'<scu uid="{i + 1}" label="x"><contributor label="x">{part.format(i=i, s=50 + i % 900, e=60 + i % 900)}</contributor></scu>'
        for i in range(36826)
    )
    start = time.perf_counter()
    with pytest.raises(HostileInput, match="locating a label"):
        parse_pyramid(pyramid_xml(r"-+\nT0001\.M\.100\.A\.A\n-+\n", text, scus))
    assert time.perf_counter() - start < 15  # XML parsing of 36,826 parts + 0.5 s of searching


def _burn(seconds):
    """Spend ``seconds`` of this thread's CPU (what the budget counts)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_budget_is_shared_by_the_files_of_one_import():
    whole = WorkBudget(0.2)
    with pytest.raises(HostileInput):
        with whole.for_file(10).run("the startDocumentRegEx") as timeout:
            assert timeout == pytest.approx(0.2 * WALL_SLACK, abs=0.03)   # regex's timeout is wall-clock
            _burn(0.25)
            raise TimeoutError
    with pytest.raises(HostileInput, match="this import's time"):
        with whole.for_file(10).run("the startDocumentRegEx"):
            pass


def test_waiting_is_not_work_a_busy_machine_refuses_no_real_file():
    """The budget counts CPU, not the wall clock: a file read while others hold the cores (here:
    this thread descheduled for three budgets' worth of wall time) is not refused as hostile."""
    budget = WorkBudget(0.1)
    for _ in range(3):
        with budget.run("locating a label that does not match its text"):
            time.sleep(0.1)
    assert budget.used < 0.05 and budget.remaining() > 0.05


def test_real_files_spend_little_of_the_budget():
    budget = WorkBudget(10)
    parse_pyramid(fixture_bytes("event_repairs.pyr"), budget=budget)
    assert budget.used < 0.2


@pytest.mark.parametrize("encoding", ["foo", "x-mac-roman", "utf-16", "ebcdic-cp-us"])
def test_unknown_or_wrong_encodings_are_read_with_a_repair(encoding):
    data = fixture_bytes("event.pyr").replace(b'<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>'.encode())
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
    other_peer = pan.replace(b"</annotation>", b"<peerscu uid=\"0\" label=\"x\"></peerscu></annotation>")
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

"""Splitting the pyramid text into references (header regexes, default, ids, blank lines)."""

from __future__ import annotations

import pytest

from annotation.formats import DucViewError, Part, parse_pyramid
from annotation.formats.references import (
    DEFAULT_HEADER_REGEX,
    header_id,
    java_escape,
    reference_ids,
    split_references,
)


def pyr(lines: list[str], regex: str | None = None, scus: str = "") -> bytes:
    """A minimal pyramid file (no DTD) around the given text lines."""

    def esc(s: str) -> str:
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    body = "".join(f"<line>{esc(line)}</line>\n" for line in lines)
    rx = f"<startDocumentRegEx><![CDATA[{regex}]]></startDocumentRegEx>" if regex else ""
    return f"<pyramid>{rx}<text>\n{body}</text>{scus}</pyramid>".encode()


def refs(data: bytes):
    pyramid, report = parse_pyramid(data)
    return [(r.id, r.header, r.text) for r in pyramid.references], report


DUC2006 = [
    "#2",
    "",
    "",
    "---------------",
    "Q0101.M.250.B.A",
    "---------------",
    "",
    "First summary, line one.",
    "",
    "Line three after a blank line.  ",
    "",
    "",
    "---------------",
    "Q0101.M.250.B.C",
    "---------------",
    "",
    "Second one.",
    "",
    "",
]


def test_duc_2006_layout_blank_lines_trimmed_inner_ones_kept():
    got, report = refs(pyr(DUC2006, r"[-]*\n(\s*)Q[0-9]*\.M\.250\.[A-Z]\.[A-Z]\n[-]*\n"))
    assert got == [
        ("A", "Q0101.M.250.B.A", "First summary, line one.\n\nLine three after a blank line.  "),
        ("C", "Q0101.M.250.B.C", "Second one."),
    ]
    assert report.ok


def test_base_offsets_are_the_first_character_of_the_reference():
    text = "\n".join(DUC2006)
    base_c = text.index("Second one.")
    scus = (
        f'<scu uid="1" label="x"><contributor label="one"><part label="one" '
        f'start="{base_c + 7}" end="{base_c + 10}"/></contributor></scu>'
    )
    pyramid, report = parse_pyramid(pyr(DUC2006, None, scus))
    assert pyramid.scus[0].contributors[0].parts == [Part("C", 7, 10)]
    assert report.ok


@pytest.mark.parametrize(
    "regex",
    [
        None,  # default
        r"[-]*\n D[0-9]*\.M\.250\.[A-Z]\.[A-Z]\n[-]*\n",  # DUC 2007
        r"-*D[0-9]+.[A-Z].250.[A-Z].[A-Z]",  # matches the id only (D0707, D0727, D0743)
        r"[-]*\n D0901\.M\.250\.K\.[A-Z]\n[-]*",  # no final newline (D0729)
        r"[-]*\n\s*D[0-9]*\.M\.250\.[A-Z]\.[A-Z]\n[-]*\n",
        r"\Q D0901.M.250.K.\E[A-Z]",  # Java quoting
    ],
)
def test_duc_2007_layout_with_every_kind_of_real_regex(regex):
    lines = [
        "#2",
        "",
        "",
        "-----------------",
        " D0901.M.250.K.F",
        "-----------------",
        "",
        "Alpha text.",
        "",
        "",
        "-----------------",
        " D0901.M.250.K.G",
        "-----------------",
        "",
        "Beta text.",
    ]
    got, report = refs(pyr(lines, regex))
    assert got == [("F", " D0901.M.250.K.F", "Alpha text."), ("G", " D0901.M.250.K.G", "Beta text.")]
    assert report.ok


def test_pyreval_style_headers():
    lines = ["-- writer1 --", "Text one.", "-- writer2 --", "Text two.", "", "      ", "      "]
    got, _ = refs(pyr(lines, r"\-\- writer[1-5] \-\-"))
    assert got == [("writer1", "-- writer1 --", "Text one."), ("writer2", "-- writer2 --", "Text two.")]
    lines = ["---------", "1.txt", "---------", "", "Text one.", "", "---------", "2.txt", "---------", "", "Text two."]
    got, _ = refs(pyr(lines, r"[-]*\n[0-9]\.txt\n[-]*\n"))
    assert got == [("1", "1.txt", "Text one."), ("2", "2.txt", "Text two.")]
    got, _ = refs(pyr(lines))  # same with the default regex
    assert got == [("1", "1.txt", "Text one."), ("2", "2.txt", "Text two.")]


def test_bare_dash_separators_get_ordinal_ids():
    lines = ["---", "Text one, a single line.", "---", "Text two.", "Still two.", "---", "Three."]
    got, _ = refs(pyr(lines))
    assert got == [("1", "1", "Text one, a single line."), ("2", "2", "Text two.\nStill two."), ("3", "3", "Three.")]


@pytest.mark.parametrize(
    ("regex", "why"),
    [
        (r"(-+)+\n", "quantified group"),
        (r"(a)\1", "back-reference"),
        (r"[", "not a valid"),
        (r"NOWHERE", "matches no header"),
        ("   ", None),  # blank: same as absent
    ],
)
def test_unusable_regex_falls_back_to_the_default_and_is_reported(regex, why):
    got, report = refs(pyr(DUC2006, regex))
    assert [g[0] for g in got] == ["A", "C"]
    if why is None:
        assert report.ok
    else:
        assert [r.kind for r in report.repairs] == ["header_regex"]
        assert why in report.repairs[0].message


def test_announced_reference_count_mismatch_is_a_legacy_issue():
    lines = ["#3"] + DUC2006[1:]
    _, report = refs(pyr(lines))
    assert [(i.kind, i.references) for i in report.legacy] == [("reference_count_mismatch", ("A", "C"))]


def test_header_ids():
    assert header_id("D0601.M.250.A.A") == "A"
    assert header_id(" D0701.M.250.A.J") == "J"
    assert header_id("-- TCstudent1 --") == "TCstudent1"
    assert header_id("3.txt") == "3"
    assert header_id("D0601.M.250.A.A.txt") == "A"
    assert reference_ids(["X1.M.1.A.A", "X2.M.1.A.A"]) == ["X1.M.1.A.A", "X2.M.1.A.A"]
    assert reference_ids(["---", "Q.A"]) == ["1", "A"]  # no id in the header: its position
    with pytest.raises(DucViewError, match="same header"):
        reference_ids(["X.A", "X.A"])


def test_text_before_the_first_header_belongs_to_no_reference():
    text = "\n".join(DUC2006)
    scus = '<scu uid="1" label="x"><contributor label="#2"><part label="#2" start="0" end="2"/></contributor></scu>'
    pyramid, report = parse_pyramid(pyr(DUC2006, None, scus))
    assert pyramid.scus == []
    assert [r.kind for r in report.rejects] == ["empty_contributor", "empty_scu"]
    assert "outside every reference text" in report.rejects[0].message
    assert text.startswith("#2")


def test_default_regex_is_java_compatible_and_matches_duc_headers():
    assert "(?m)" in DEFAULT_HEADER_REGEX
    split = split_references("\n".join(DUC2006), None)
    assert [r.id for r in split.refs] == ["A", "C"]
    assert split.note is None


def test_java_escape():
    assert java_escape("D0601.M.250.A.A") == r"D0601\.M\.250\.A\.A"
    assert java_escape(" x]]>") == r"\ x\]\]\>"

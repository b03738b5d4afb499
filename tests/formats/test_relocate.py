"""Locating a part's label near its stored offsets."""

from __future__ import annotations

from annotation.formats.relocate import Placement, locate_span

TEXT = "The mayor of Qualmsby resigned.\nHe said the vote was\nunfair. The mayor left."


def test_exact():
    assert locate_span(TEXT, "mayor", 4, 9) == Placement(4, 9, "exact")


def test_newline_dropped_from_label_keeps_offsets():
    s = TEXT.index("vote was\nunfair")
    assert locate_span(TEXT, "vote wasunfair", s, s + 15) == Placement(s, s + 15, "label")


def test_whitespace_differences_keep_offsets():
    s = TEXT.index("vote was\nunfair")
    assert locate_span(TEXT, "vote  was unfair", s, s + 15) == Placement(s, s + 15, "label")


def test_shifted_offsets_moved_to_the_nearest_occurrence():
    second = TEXT.index("The mayor left")
    got = locate_span(TEXT, "The mayor", second + 2, second + 11)
    assert got == Placement(second, second + 9, "moved")
    assert locate_span(TEXT, "The mayor", 1, 10) == Placement(0, 9, "moved")


def test_span_with_surrounding_blank_is_tightened():
    s = TEXT.index("resigned")
    assert locate_span(TEXT, "resigned", s - 1, s + 8) == Placement(s, s + 8, "moved")


def test_not_found_or_too_far():
    assert locate_span(TEXT, "governor", 4, 12) is None
    far = "x" * 3000 + " target"
    assert locate_span(far, "target", 0, 6) is None
    assert locate_span(far, "target", 0, 6, window=5000) == Placement(3001, 3007, "moved")
    assert locate_span(TEXT, "   ", 0, 3) is None


def test_encoding_glitches():
    text = "Prime Minister Jean Chr\ufffdtien spoke; \u201cquoted\u201d words \u2014 here."
    s = text.index("Chr")
    assert locate_span(text, "Chr\ufffdtien", s, s + 8) == Placement(s, s + 8, "exact")
    for label in ("Chr?tien", "Chr\u00e9tien", "Chr\u00c3\u00a9tien"):  # ?, é, mojibake
        assert locate_span(text, label, s, s + 8) == Placement(s, s + 8, "label"), label
    q = text.index("\u201c")
    assert locate_span(text, '"quoted"', q, q + 8) == Placement(q, q + 8, "label")
    d = text.index("words")
    assert locate_span(text, "words - here", d, d + 12) == Placement(d, d + 12, "label")


def test_html_escaped_label():
    text = 'He said "no" twice.'
    s = text.index('"no"')
    assert locate_span(text, "&quot;no&quot;", s + 1, s + 5) == Placement(s, s + 4, "moved")

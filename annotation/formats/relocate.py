"""Place a stored span whose label does not match the text at its stored offsets.

In the DUC 2005-2007 files about 1% of the parts have ``text[start:end] != label``. Two causes
were found in the real data:

* DUCView removes newlines from labels when it saves (``xmlize``), so a part that spans a line
  break has a label without the ``\\n``: the offsets are right, only the label differs
  (kind ``"label"``: the stored offsets are kept).
* The text was edited after annotation and later offsets are shifted (DUC 2007 D0740: by one
  character): the label is found near the stored offsets (kind ``"moved"``).

The search is whitespace-insensitive (whitespace in the label is ignored and any run of
whitespace is allowed between two characters of the text) and tolerant of encoding glitches:
a run of non-ASCII characters, ``?`` or U+FFFD in the label matches such a run in the text
(``Chr\\ufffdtien`` / ``Chr?tien`` / ``Chrétien`` / mojibake ``ChrÃ©tien``), typographic quotes
and dashes match their ASCII forms, and an HTML-escaped or mojibake label is tried unescaped or
repaired too. Among the matches within ``window`` characters of the stored span the nearest wins.

The patterns are built from labels, which come from the file, and some of them can backtrack
(runs of non-ASCII wildcards next to quote classes that also match ``?``): they run on the
``regex`` package with the time left in the file's :class:`~annotation.formats.bounds.WorkBudget`.
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass

import regex

from annotation.formats.bounds import WorkBudget

__all__ = ["Placement", "locate_span", "DEFAULT_WINDOW"]

DEFAULT_WINDOW = 1000
MAX_LABEL = 5000  # longer labels are not searched for (bounded work on hostile files)
_WILD = r"(?:[^\x00-\x7f]|\?)+"
_ASCII_EQUIV = {
    "'": "['`\u2018\u2019\u00b4\u02bc]",
    '"': "(?:[\"\u201c\u201d]|'')",
    "-": "[\\-\u2010-\u2015]",
}
_NON_ASCII_EQUIV = {
    "\u2018": "['`\u2018\u2019\u00b4?\ufffd]",
    "\u2019": "['`\u2018\u2019\u00b4?\ufffd]",
    "\u201c": "(?:[\"\u201c\u201d?\ufffd]|'')",
    "\u201d": "(?:[\"\u201c\u201d?\ufffd]|'')",
    "\u2013": "(?:[\\-\u2013\u2014?\ufffd]|--)",
    "\u2014": "(?:[\\-\u2013\u2014?\ufffd]|--)",
}
_SEP = r"\s*"


@dataclass(frozen=True)
class Placement:
    start: int
    end: int
    kind: str  # "exact" | "label" (same offsets, label differs in whitespace/encoding) | "moved"


def _pattern(label: str) -> regex.Pattern[str] | None:
    tokens: list[str] = []
    wild = False
    for ch in label:
        if ch.isspace():
            continue
        if ch in _NON_ASCII_EQUIV:
            tokens.append(_NON_ASCII_EQUIV[ch])
            wild = False
        elif ord(ch) > 127 or ch == "?":
            if not wild:
                tokens.append(_WILD)
            wild = True
        else:
            tokens.append(_ASCII_EQUIV.get(ch, re.escape(ch)))
            wild = False
    if not tokens:
        return None
    return regex.compile(_SEP.join(tokens), regex.VERSION0)


def _candidates(label: str) -> list[str]:
    out = [label]
    unescaped = html.unescape(label)
    if unescaped != label:
        out.append(unescaped)
    for codec in ("cp1252", "latin-1"):
        try:
            fixed = label.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        if fixed not in out:
            out.append(fixed)
    return out


def locate_span(
    text: str,
    label: str,
    start: int,
    end: int,
    *,
    window: int = DEFAULT_WINDOW,
    budget: WorkBudget | None = None,
) -> Placement | None:
    """Where ``label`` lies in ``text``, given its stored offsets ``[start, end)``.

    Returns ``None`` when the label cannot be placed within ``window`` characters of the stored
    span (or is empty while the stored span is not). Stored offsets outside the text, or with
    ``end < start``, are searched around as they are. Raises
    :class:`~annotation.formats.bounds.HostileInput` when the search runs past ``budget``
    (default: a fresh per-file budget).
    """
    if 0 <= start <= end <= len(text) and text[start:end] == label:
        return Placement(start, end, "exact")
    if len(label) > MAX_LABEL:
        return None
    budget = budget or WorkBudget()
    return budget.call(
        "locating a label that does not match its text",
        lambda timeout: _search(text, label, start, end, window, timeout),
    )


def _search(text: str, label: str, start: int, end: int, window: int, seconds: float) -> Placement | None:
    deadline = time.perf_counter() + seconds

    def timeout() -> float:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise TimeoutError
        return left

    patterns = [p for p in (_pattern(c) for c in _candidates(label)) if p is not None]
    if not patterns:
        return None
    if 0 <= start <= end <= len(text):
        for pat in patterns:
            if pat.fullmatch(text, start, end, timeout=timeout()):
                return Placement(start, end, "label")
    lo = max(0, min(start, end) - window)
    hi = min(len(text), max(start, end) + window)
    best: tuple[int, int, int] | None = None
    for pat in patterns:
        if lo >= hi:
            break
        for m in pat.finditer(text, lo, hi, timeout=timeout()):
            dist = abs(m.start() - start) + abs(m.end() - end)
            if best is None or dist < best[0]:
                best = (dist, m.start(), m.end())
        if best is not None:
            break  # prefer the label as stored over its unescaped / repaired forms
    if best is None:
        return None
    return Placement(best[1], best[2], "moved")

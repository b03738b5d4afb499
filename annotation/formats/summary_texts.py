"""Summaries given as plain text, as coordinators have them: one text holding several summaries
each under a header line (DUCView's "New pyramid": one file and a header pattern), or files whose
names say which topic and summary they are (a zip of text files). Pure Python.

The patterns come from the user, so they are untrusted: they are compiled with the ``regex``
package (at most :data:`MAX_PATTERN` characters) and their matching is charged to one
``bounds.WorkBudget`` (``timeout`` seconds in all, as the DUCView importer bounds file-supplied
patterns), so a catastrophic pattern is refused with a message instead of holding a worker; a text
holds at most ``references.MAX_HEADERS`` headers.

Splitting follows DUCView's reading of ``startDocumentRegEx`` exactly as the importer does
(``references``): the header block is the whole lines the match touches, the header line is its
first line that is not blank or decoration, the id is the header's last ``.``-separated field
(``D0601.M.250.A.A`` -> ``A``, ``== 3 ==`` -> ``3``), and a summary's text runs to the next header
without leading or trailing blank or decoration lines. Patterns are compiled with ``MULTILINE``
(``^``/``$`` match at line ends) as DUCView users write them.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

import regex

from annotation.formats import references
from annotation.formats.bounds import HostileInput, WorkBudget
from annotation.formats.errors import DucViewError

MAX_PATTERN = 1000
TIMEOUT = 1.0
MAX_ID = 100  # Summary.external_id / Topic.external_id max_length
DEFAULT_HEADER_PATTERN = references.DEFAULT_HEADER_REGEX
# NIST summary file names (D0601.M.250.A.A: topic D0601, the assessor letter after it dropped;
# letters are human summaries, numbers are systems).
DEFAULT_REFERENCE_NAMES = r"(?P<topic>D\d{4})[A-Z]?\.M\.\d+\.[A-Z]\.(?P<id>[A-Z])(?:\.txt)?"
DEFAULT_PEER_NAMES = r"(?P<topic>D\d{4})[A-Z]?\.M\.\d+\.[A-Z]\.(?P<id>\d+)(?:\.txt)?"


class PatternError(ValueError):
    """The pattern or the text cannot be used; the message says why, for the person who typed it."""


@dataclass(frozen=True)
class Piece:
    """One summary found in a text: its id, the header line it came from, its text."""

    id: str
    header: str
    text: str


@dataclass
class Split:
    pieces: list[Piece]
    notes: list[str] = field(default_factory=list)


def compile_pattern(pattern: str, what: str = "the pattern") -> regex.Pattern:
    if not pattern.strip():
        raise PatternError(f"{what} is empty")
    if len(pattern) > MAX_PATTERN:
        raise PatternError(f"{what} is longer than {MAX_PATTERN} characters")
    try:
        return regex.compile(pattern, regex.MULTILINE | regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, ValueError) as error:
        raise PatternError(f"{what} is not a valid regular expression: {error}") from None


def normalise(text: str) -> str:
    """One line-end convention (files from Windows use CRLF); a byte-order mark dropped."""
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def split_by_headers(text: str, pattern: str = DEFAULT_HEADER_PATTERN, timeout: float = TIMEOUT) -> Split:
    """The summaries of ``text``, each under a header the pattern matches (see the module docstring)."""
    text = normalise(text)
    compiled = compile_pattern(pattern, "the header pattern")
    budget = WorkBudget(timeout)
    try:
        blocks = references._blocks(text, compiled, budget, "the header pattern")
        if not blocks:
            raise PatternError("the header pattern matches no header in the text")
        headers = [references._header_line(text, start, end) or str(i + 1) for i, (start, end) in enumerate(blocks)]
        ids = budget.call("reading the headers", lambda _timeout: references.reference_ids(headers))
    except HostileInput:
        raise PatternError(_too_slow("the header pattern", timeout, "this text")) from None
    except DucViewError as error:
        raise PatternError(str(error)) from None
    notes = []
    before = text[: blocks[0][0]].strip()
    if before:
        notes.append(f"text before the first header is not part of any summary: {_excerpt(before)!r}")
    pieces = []
    for i, (_, end) in enumerate(blocks):
        region_end = blocks[i + 1][0] if i + 1 < len(blocks) else len(text)
        base, stop = references._trim(text, end, region_end)
        pieces.append(Piece(ids[i].strip(), headers[i].strip(), text[base:stop]))
    return Split(pieces, notes)


def _too_slow(what: str, timeout: float, on: str) -> str:
    return (
        f"{what} took longer than {timeout:g} s on {on}: make it simpler "
        "(nested repetitions such as (a+)+ can take exponential time)"
    )


def _excerpt(text: str, size: int = 60) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


@dataclass(frozen=True)
class NamedFile:
    """A text file whose name matched a pattern: which topic and summary it holds."""

    path: str
    kind: str  # "reference" or "peer"
    topic: str
    id: str


class NamePatterns:
    """Patterns for file names (matched against the whole base name), each with the named groups
    ``topic`` and ``id``: one for reference summaries, one for peers."""

    def __init__(self, reference: str, peer: str, timeout: float = TIMEOUT):
        self.patterns = []
        for kind, pattern in (("reference", reference), ("peer", peer)):
            if not pattern.strip():
                continue
            what = f"the {kind} file name pattern"
            compiled = compile_pattern(pattern, what)
            missing = [g for g in ("topic", "id") if g not in compiled.groupindex]
            if missing:
                raise PatternError(
                    f"{what} needs the named group{'s' if len(missing) > 1 else ''} "
                    + " and ".join(f"(?P<{g}>...)" for g in missing)
                )
            self.patterns.append((kind, compiled, what))
        if not self.patterns:
            raise PatternError("give a file name pattern for references, peers or both")
        self.budget = WorkBudget(timeout)
        self.timeout = timeout

    def classify(self, path: str) -> NamedFile | None:
        """The file's kind, topic and id, or None if no pattern matches its base name."""
        name = posixpath.basename(path)
        for kind, compiled, what in self.patterns:
            try:
                m = self.budget.call(what, lambda timeout, compiled=compiled: compiled.fullmatch(name, timeout=timeout))
            except HostileInput:
                raise PatternError(_too_slow(what, self.timeout, "these file names")) from None
            if m and m.group("topic") and m.group("id"):
                return NamedFile(path, kind, m.group("topic"), m.group("id"))
        return None

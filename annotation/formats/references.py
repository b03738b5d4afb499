"""Split the whole text of a DUCView pyramid into reference summaries.

DUCView stores all reference summaries in one text and finds where each one starts with
``startDocumentRegEx`` (a Java regex; DUCView takes ``Matcher.start()`` of every match as a
document start). We use the match to find a *header block* and the text between two header
blocks as one reference:

* The header block is made of whole lines: from the line holding the first non-blank character
  of the match to the end of the line holding its last character (a match that ends with a
  newline, or with blanks at the start of the next line, ends on the previous line).
* The *header line* is the first line of the block that is neither blank nor a decoration line
  (3 or more ``-`` or ``=``). Real headers: ``D0601.M.250.A.A`` (DUC 2006),
  `` D0701.M.250.A.A`` (DUC 2007, with a leading blank), ``-- TCstudent1 --``, ``1.txt``
  (PyrEval). ``Reference.header`` is that line exactly as it is (DUC 2007 headers keep their
  leading blank: the DUC 2007 regexes need it).
* The reference id is the last ``.``-separated field of the header with surrounding
  dashes/blanks and a ``.txt`` extension removed (``D0601.M.250.A.A`` -> ``A``,
  ``-- TCstudent1 --`` -> ``TCstudent1``, ``1.txt`` -> ``1``). A block without a header line
  (the PyrEval ``---`` separators) gets its 1-based position as header and id. If two ids
  collide, the whole headers are used as ids; if those collide too the file is refused.
* A reference's text runs from the end of its header block to the start of the next one (or
  the end of the text) **without its leading and trailing blank or decoration lines**
  (so ``Reference.text`` never starts or ends with an empty line; trailing blanks on its last
  line are kept). Its *base* is the global offset of its first character;
  local offset = global offset - base.
* Text before the first header block (``#4`` and blank lines in the DUC files) belongs to no
  reference.

Without ``startDocumentRegEx`` (8 DUC pyramids, some PyrEval ones) :data:`DEFAULT_HEADER_REGEX`
is used (a dash line, a header line made of one word such as ``D0601.M.250.A.A``, a dash line),
then, if it finds nothing, bare dash lines (each one starts a reference).
A file regex that Python cannot compile, that looks catastrophic (quantified groups,
back-references, over 1000 characters) or that matches nothing is replaced by the default and
the caller reports it. The file's regex runs on the ``regex`` package under a time bound
(:class:`~annotation.formats.bounds.WorkBudget`): one that backtracks past it refuses the file
as hostile (:class:`~annotation.formats.bounds.HostileInput`); so does the work on the headers
found (all of it linear), and a text with more than :data:`MAX_HEADERS` headers is refused.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import regex

from annotation.formats.bounds import WorkBudget
from annotation.formats.errors import DucViewError

__all__ = [
    "DEFAULT_HEADER_REGEX",
    "BARE_SEPARATOR_REGEX",
    "RefSpan",
    "Split",
    "split_references",
    "compile_header_regex",
    "reference_ids",
    "header_id",
    "java_escape",
]

# Java- and Python-compatible.
DEFAULT_HEADER_REGEX = r"(?m)^[ \t]*-{3,}[ \t]*\n[ \t]*[^\s-]\S*[ \t]*\n[ \t]*-{3,}[ \t]*$"
BARE_SEPARATOR_REGEX = r"(?m)^[ \t]*-{3,}[ \t]*$"
MAX_REGEX_LENGTH = 1000
# Headers one text may hold: real pyramids have 4 to 10 references and a topic a few dozen peers;
# past this a text is refused (a pasted text of 300,000 header lines held a worker for minutes).
MAX_HEADERS = 1000

_DECORATION_RE = re.compile(r"[ \t]*(?:[-=]{3,}[ \t]*)?")
_QUANTIFIED_GROUP_RE = re.compile(r"(?<!\\)\)\s*(?:[*+{]|\?(?![:=!<]))")
_BACKREF_RE = re.compile(r"\\(?:[1-9]|k<)")
_JAVA_QUOTE_RE = re.compile(r"\\Q(.*?)(?:\\E|$)", re.S)
_DEFAULTS = {p: regex.compile(p, regex.ASCII | regex.VERSION0) for p in (DEFAULT_HEADER_REGEX, BARE_SEPARATOR_REGEX)}
_EXTENSION_RE = re.compile(r"\.(?:txt|text|sum|summ|summary)$", re.I)


@dataclass(frozen=True)
class RefSpan:
    id: str
    header: str
    base: int  # global offset of the first character of the reference text
    end: int  # global offset just after its last character
    region_start: int  # end of the header block
    region_end: int  # start of the next header block (or end of text)


@dataclass(frozen=True)
class Split:
    refs: list[RefSpan]
    regex_used: str
    note: str | None  # why the file regex was not used, if it was not


def java_escape(s: str) -> str:
    """Escape a literal for a regex valid in both Java and Python (every ASCII non-alphanumeric
    character gets a backslash, which both engines accept)."""
    return "".join("\\" + c if (c.isascii() and not c.isalnum()) else c for c in s)


def compile_header_regex(source: str) -> tuple[regex.Pattern[str] | None, str | None]:
    """Compile a (Java) header regex for Python; return (pattern, None) or (None, reason).

    The pattern is a ``regex`` package pattern (Python ``re`` syntax, version 0), so that it
    can be run with a timeout: it comes from the file."""
    if not source.strip():
        return None, "the startDocumentRegEx is empty"
    if len(source) > MAX_REGEX_LENGTH:
        return None, f"the startDocumentRegEx is longer than {MAX_REGEX_LENGTH} characters"
    if _BACKREF_RE.search(source) or _QUANTIFIED_GROUP_RE.search(source):
        return None, (
            "the startDocumentRegEx has a quantified group or a back-reference (refused: could take exponential time)"
        )
    py = _JAVA_QUOTE_RE.sub(lambda m: re.escape(m.group(1)), source)
    try:
        re.compile(py)  # the same syntax as the defaults and the writer: Python's own
        # Java's \s, \d, \w are ASCII-only by default.
        return regex.compile(py, regex.ASCII | regex.VERSION0), None
    except (re.error, regex.error, OverflowError, RecursionError) as exc:
        return None, f"the startDocumentRegEx is not a valid (Python) regex: {exc}"


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_end(text: str, pos: int) -> int:
    """Offset just after the newline ending the line containing pos (or len(text))."""
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


def _is_filler(line: str) -> bool:
    return _DECORATION_RE.fullmatch(line) is not None


def header_id(header: str) -> str:
    core = header.strip().strip("-=*#~_ \t")
    core = _EXTENSION_RE.sub("", core)
    if "." in core:
        last = core.rsplit(".", 1)[1].strip()
        if last:
            return last
    return core


def reference_ids(headers: list[str]) -> list[str]:
    """Reference ids for the given header lines (see module docstring); linear in their number."""
    if len(headers) > MAX_HEADERS:
        raise too_many_headers()
    ids = [header_id(h) or str(i + 1) for i, h in enumerate(headers)]
    if len(set(ids)) == len(ids):
        return ids
    ids = [h.strip() or str(i + 1) for i, h in enumerate(headers)]
    dup = sorted(i for i, n in Counter(ids).items() if n > 1)
    if dup:
        raise DucViewError(f"several references have the same header {dup[0]!r}")
    return ids


def too_many_headers() -> DucViewError:
    return DucViewError(
        f"the text has more than {MAX_HEADERS} headers; at most {MAX_HEADERS} summaries "
        "can be read from one text (split it, or check that the header pattern "
        "matches only header lines)"
    )


def _blocks(
    text: str, pattern: regex.Pattern[str], budget: WorkBudget, what: str = "the startDocumentRegEx"
) -> list[tuple[int, int]]:
    """The header blocks the pattern finds, read within ``budget`` (matching and the work on each
    match): a search that times out because the thread waited goes on after the last match."""
    blocks: list[tuple[int, int]] = []
    resume = 0  # after a timeout, matching goes on from the end of the last non-empty match

    def scan(timeout: float) -> list[tuple[int, int]]:
        nonlocal resume
        for m in pattern.finditer(text, resume, timeout=timeout):
            s, e = m.start(), m.end()
            if e <= s:
                continue
            resume = e
            # start: skip blanks/newlines at the start of the match
            while s < e and text[s] in " \t\r\n":
                s += 1
            if s >= e:
                continue
            bstart = _line_start(text, s)
            # end: a match ending at a line start (or in the blanks that open a line) ends before it
            ls = _line_start(text, e)
            bend = ls if text[ls:e].strip() == "" else _line_end(text, e - 1)
            if bend <= bstart:
                bend = _line_end(text, s)
            if blocks and bstart < blocks[-1][1]:
                continue  # overlaps the previous header block
            blocks.append((bstart, bend))
            if len(blocks) > MAX_HEADERS:
                raise too_many_headers()
        return blocks

    return budget.call(what, scan)


def _header_line(text: str, bstart: int, bend: int) -> str | None:
    for line in text[bstart:bend].split("\n"):
        if line.strip() and not _is_filler(line):
            return line
    return None


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop leading and trailing blank/decoration lines of text[start:end]."""
    lines = text[start:end].split("\n")
    offs = []
    pos = start
    for line in lines:
        offs.append(pos)
        pos += len(line) + 1
    keep = [i for i, line in enumerate(lines) if not _is_filler(line)]
    if not keep:
        return start, start
    first, last = keep[0], keep[-1]
    return offs[first], offs[last] + len(lines[last])


def split_references(text: str, header_regex: str | None, budget: WorkBudget | None = None) -> Split:
    """Split ``text`` into references; raises DucViewError if no header is found, HostileInput
    if the file's regex runs past ``budget`` (default: a fresh per-file budget)."""
    budget = budget or WorkBudget()
    note = None
    blocks: list[tuple[int, int]] = []
    used = None
    if header_regex is not None:
        pattern, note = compile_header_regex(header_regex)
        if pattern is not None:
            blocks = _blocks(text, pattern, budget)
            used = header_regex
            if not blocks:
                note = "the startDocumentRegEx matches no header in the text"
    if not blocks:
        for default in (DEFAULT_HEADER_REGEX, BARE_SEPARATOR_REGEX):
            blocks = _blocks(text, _DEFAULTS[default], budget, "the default reference headers")
            used = default
            if blocks:
                break
    if not blocks:
        raise DucViewError(
            "no reference header found in the pyramid text "
            + (f"({note}; " if note else "(")
            + "expected lines such as '---------------', 'D0601.M.250.A.A', '---------------')"
        )
    headers: list[str] = []
    for i, (bs, be) in enumerate(blocks):
        headers.append(_header_line(text, bs, be) or str(i + 1))
    ids = budget.call("reading the reference headers", lambda _timeout: reference_ids(headers))
    refs = []
    for i, (_, be) in enumerate(blocks):
        region_end = blocks[i + 1][0] if i + 1 < len(blocks) else len(text)
        base, end = _trim(text, be, region_end)
        refs.append(RefSpan(ids[i], headers[i], base, end, be, region_end))
    assert used is not None
    return Split(refs, used, note)

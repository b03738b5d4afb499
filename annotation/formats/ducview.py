"""Read and write DUCView pyramid (.pyr) and peer annotation (.pan) files.

Pure Python (no Django). Reading is here, writing in :mod:`annotation.formats.writer`, the
dataclasses in :mod:`annotation.formats.model`, the splitting of the pyramid text into
references (header regex, ids, blank lines, base offsets) in :mod:`annotation.formats.references`
and the placing of mismatched labels in :mod:`annotation.formats.relocate`.

Conventions of the dataclasses:

* Offsets are 0-based, end-exclusive, in Python code points. ``Part`` offsets index the text
  of ONE reference (``Reference.text``), ``PeerPart`` offsets the peer text. (The files store
  offsets into the whole pyramid text, in Java UTF-16 code units; both are converted.)
* A ``Contributor``'s ``label`` is the file's label, re-derived from the placed parts (texts in
  text order joined with ``...``) when one of its parts had to be repaired or was rejected.
  The writer always derives it. The same holds for ``PeerMatch.label``.
* Parts keep the order of the file; peer matches are listed in the order of the pyramid's SCUs
  (repetitions of one SCU in file order), which is also the order the writer uses.

Reading never returns something partial: a file that cannot be read raises
:class:`DucViewError`. What was repaired is in ``Report.repairs``; legacy oddities that are kept
as they are (contributors spanning two references, two contributors of one SCU from the same
reference) are in ``Report.legacy``.

Nothing the file's own tool counted is lost. DUCView marks and scores by offsets, never by labels,
so a part whose label is found nowhere near its offsets (a stale label) stays at its stored
offsets (a pyramid part clipped to the reference it overlaps most), and is flagged (``review``: "offsets kept, label
not found —
review"; repair kind ``"kept"``). Only a part with nothing of the text at its offsets (outside the
text, or empty) is left out (``Report.rejects``); a peer match left without parts still stays
(flagged), so the peer's score is the file's. A pyramid contributor is left out only when none of
its parts lies in a reference text (one entry in ``Report.rejects`` says why).
"""

from __future__ import annotations

import hashlib
import pyexpat
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple
from xml.etree.ElementTree import Element, ParseError

from defusedxml.common import EntitiesForbidden, ExternalReferenceForbidden

from annotation.formats._text import Utf16Offsets, derived_label, short
from annotation.formats.bounds import WorkBudget
from annotation.formats.errors import DucViewError
from annotation.formats.model import (
    SCU,
    Contributor,
    LegacyIssue,
    Part,
    PeerAnnotationFile,
    PeerMatch,
    PeerPart,
    Pyramid,
    Reference,
    Reject,
    Repair,
    Report,
)
from annotation.formats.references import RefSpan, split_references
from annotation.formats.relocate import DEFAULT_WINDOW, locate_span

__all__ = ["DEFAULT_MAX_BYTES", "parse_pyramid", "parse_peer_annotation"]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024


# --------------------------------------------------------------------------- XML reading


_INT_RE = re.compile(r"[+-]?[0-9]{1,12}")
_XML_DECL_RE = re.compile(rb"^\s*<\?xml[^>]*\?>")
_XML_DECL_ENCODING_RE = re.compile(rb"^\s*<\?xml[^>]*encoding\s*=\s*['\"]([^'\"]{0,40})")
UID_MAX = 2**31 - 1  # DUCView's uids are Java ints; the database column too


def _checked_bytes(data: bytes, max_bytes: int) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    data = bytes(data)
    if len(data) > max_bytes:
        raise DucViewError(f"the file is {len(data)} bytes, over the limit of {max_bytes} bytes")
    if not data.strip():
        raise DucViewError("the file is empty")
    return data


def _load_xml(data: bytes, report: Report, span: _PyramidSpan | None = None) -> Element:
    """The document's tree (``data`` already checked); ``span``, if given, is filled in with where
    the root's first <pyramid> child lies in the bytes (when read without an encoding repair)."""
    try:
        return _fromstring(data, span)
    except DucViewError as first:
        if first.args[0].startswith("forbidden"):
            raise
        for text, why in _decodings(data):
            try:
                root = _fromstring(text)
            except DucViewError:
                continue
            report.repairs.append(Repair("encoding", why, "file"))
            return root
        raise first from None


def _decodings(data: bytes) -> list[tuple[str, str]]:
    """Readings of a file the XML parser failed on, to try in turn: (text, what was done).

    A file saved in Windows-1252 without saying so, a declaration naming an encoding the parser
    does not know or a wrong one: the declared codec if Python has it, else UTF-8, else
    Windows-1252. None when the bytes are valid UTF-8 as declared (a real XML error).
    """
    if data[:3] == b"\xef\xbb\xbf" or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return []  # a byte order mark: the parser read the encoding right
    m = _XML_DECL_ENCODING_RE.match(data)
    declared = m.group(1).decode("ascii", "replace").strip().lower() if m else None
    body = _XML_DECL_RE.sub(b"", data, count=1)
    out = []
    if declared not in (None, "utf-8", "utf8"):
        try:
            out.append((body.decode(declared), f"the file declares encoding {declared!r}; read it as such"))
        except (LookupError, UnicodeDecodeError, ValueError):
            pass
        try:
            out.append(
                (
                    body.decode("utf-8"),
                    f"the file declares encoding {declared!r}, which cannot be used; read it as UTF-8",
                )
            )
        except UnicodeDecodeError:
            pass
    else:
        try:
            body.decode("utf-8")
            return []  # valid UTF-8 as declared: the error is not an encoding problem
        except UnicodeDecodeError:
            pass
    out.append(
        (
            body.decode("cp1252", errors="replace"),
            "the file is not valid UTF-8"
            + (f" (it declares {declared!r})" if declared else "")
            + ": read it as Windows-1252",
        )
    )
    return out


def _fromstring(data: bytes | str, span: _PyramidSpan | None = None) -> Element:
    """Parse in two passes of expat's C code: the first builds nothing and refuses what defusedxml
    refuses (an inline DTD is accepted, every DUCView file has one; entity declarations, billion
    laughs, and external entities or DTDs are not), the second builds the tree with ElementTree's C
    builder. Both are several times faster than defusedxml's parser, which calls Python for every
    element. With ``span`` the first pass also notes where the first <pyramid> child lies."""
    parser = pyexpat.ParserCreate()
    parser.EntityDeclHandler = _forbid_entity
    parser.UnparsedEntityDeclHandler = _forbid_unparsed_entity
    parser.ExternalEntityRefHandler = _forbid_external
    if span is not None:
        span.follow(parser)
    try:
        parser.Parse(data, True)
        return ET.fromstring(data)
    except (EntitiesForbidden, ExternalReferenceForbidden) as exc:
        raise DucViewError(f"forbidden XML construct (entities are not allowed): {exc}") from None
    except (pyexpat.ExpatError, ParseError, LookupError, ValueError, UnicodeError) as exc:
        # LookupError: an encoding the parser does not know; ValueError: e.g. a NUL in a str
        raise DucViewError(f"malformed XML: {exc}") from None


def _forbid_entity(name, is_parameter_entity, value, base, sysid, pubid, notation_name):
    raise EntitiesForbidden(name, value, base, sysid, pubid, notation_name)


def _forbid_unparsed_entity(name, base, sysid, pubid, notation_name):
    raise EntitiesForbidden(name, None, base, sysid, pubid, notation_name)


def _forbid_external(context, base, sysid, pubid):
    raise ExternalReferenceForbidden(context, base, sysid, pubid)


class _PyramidSpan:
    """Where the root's first <pyramid> child lies in a file's bytes, as expat reads it: from the
    ``<`` of its start tag to just after its end tag (``end`` stays None for ``<pyramid/>`` or an
    end tag written with blanks, which are then never memoised)."""

    def __init__(self, data: bytes):
        self.data, self.depth, self.start, self.end = data, 0, None, None
        self.parser = None

    def follow(self, parser) -> None:
        self.parser = parser
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end

    def _start(self, name, attributes):
        self.depth += 1
        if self.depth == 2 and name == "pyramid" and self.start is None:
            self.start = self.parser.CurrentByteIndex

    def _end(self, name):
        if self.depth == 2 and name == "pyramid" and self.start is not None and self.end is None:
            at = self.parser.CurrentByteIndex
            self.end = at + len(_PYRAMID_END) if self.data.startswith(_PYRAMID_END, at) else -1
        self.depth -= 1


def _int_attr(el: Element, name: str, where: str | _Later) -> int:
    """An integer attribute of at most 12 digits; ``where`` says where ``el`` is (most files hold
    tens of thousands of such attributes, all plain digits: pass a ``_Later`` for those)."""
    value = el.get(name)
    if value is not None and value.isascii() and value.isdigit() and len(value) <= 12:
        return int(value)
    if value is None:
        raise DucViewError(f"{where}: <{el.tag}> has no {name!r} attribute")
    if not _INT_RE.fullmatch(value.strip()):
        raise DucViewError(f"{where}: <{el.tag}> attribute {name}={value!r} is not an integer (of at most 12 digits)")
    return int(value.strip())


def _lines_text(text_el: Element, where: str) -> str:
    lines = []
    for i, line in enumerate(text_el):
        if line.tag != "line":
            raise DucViewError(f"{where}: <text> holds a <{line.tag}> element (only <line>)")
        if len(line):
            raise DucViewError(f"{where}: <line> {i + 1} holds a <{line[0].tag}> element")
        lines.append(line.text or "")
    # Literal CRLF/CR line ends are normalised to LF by the XML parser. A CR written as &#13;
    # survives it: it becomes a LF too (same length, so the stored offsets stay valid).
    return "\n".join(lines).replace("\r", "\n")


# --------------------------------------------------------------------------- placing parts


KEPT_NOTE = "offsets kept, label not found — review"
EVIDENCE_LOST_NOTE = "no evidence left (its parts lie outside the text and their labels are nowhere in it) — review"


class _Placed(NamedTuple):
    start: int
    end: int
    kept: bool = False  # the label was found nowhere: the stored offsets are kept (``_kept``)


def _review(notes: list[str]) -> str:
    """The review note of a contributor or match from its parts' notes (each said once)."""
    return "; ".join(dict.fromkeys(notes))


@dataclass
class _Located:
    start: int
    end: int
    ref: RefSpan


def _read_parts(contributor_el: Element, cwhere: _Later, u16: Utf16Offsets, text: str) -> list[tuple[str, int, int]]:
    """(label, start, end) of each <part> of a contributor, offsets converted from the file's
    UTF-16 to code points. Offsets outside the text or reversed are kept as they are (the
    placing repairs or drops them); a part without a label takes the text at its offsets."""
    raw = []
    for pi, p_el in enumerate(contributor_el.findall("part")):
        pwhere = _Later(lambda pi=pi: f"{cwhere}, <part> {pi + 1}")
        s16, e16 = _int_attr(p_el, "start", pwhere), _int_attr(p_el, "end", pwhere)
        s, e = (u16.to_cp(v) if 0 <= v <= u16.u16_len else v for v in (s16, e16)) if u16.astral else (s16, e16)
        plabel = p_el.get("label")
        if plabel is None:
            plabel = text[s:e] if 0 <= s <= e <= len(text) else ""
        raw.append((plabel, s, e))
    return raw


class _Later:
    """A location in a file, for messages, formatted only if a message is written: most elements
    need none, and formatting each one's location was a tenth of reading a .pan."""

    __slots__ = ("format",)

    def __init__(self, format: Callable[[], str]):
        self.format = format

    def __str__(self) -> str:
        return self.format()


def _where(scope: str, uid: int, ci: int, pi: int | None = None, clabel: str | None = None) -> _Later:
    """Where a contributor or a part is, as the messages about placing parts say it."""

    def text() -> str:
        s = f"{'peer SCU' if scope == 'peer' else 'SCU'} {uid}, contributor {ci + 1}"
        if clabel is not None:
            s += f" ({short(clabel, 40)})"
        if pi is not None:
            s += f", part {pi + 1}"
        return s

    return _Later(text)


def _place(
    text: str,
    label: str,
    start: int,
    end: int,
    where: _Later,
    scope: str,
    uid: int,
    ci: int,
    pi: int,
    report: Report,
    budget: WorkBudget,
) -> _Placed | None:
    """Where a part lies: at its stored offsets when its label is there, else where its label is
    found near them, else at its stored offsets still (``_kept``); None when nothing of the text is
    there either (reported)."""
    if 0 <= start < end <= len(text) and text[start:end] == label:
        return _Placed(start, end)  # where its label says: the usual case (no placement, no message)
    valid = 0 <= start <= end <= len(text) and (start < end or label == "")
    if start == end and label == "":
        report.rejects.append(
            Reject(
                "empty_part",
                f"{where}: empty part at [{start}, {end}) left out",
                scope,
                uid,
                ci,
                pi,
                label,
                (start, end),
            )
        )
        return None
    # Reversed or out-of-range offsets: search around them, clamped to the text (offsets
    # outside the text say nothing of where the label is: the whole text is searched then).
    lo, hi = (max(0, min(v, len(text))) for v in sorted((start, end)))
    outside = min(start, end) < 0 or max(start, end) > len(text)
    placement = locate_span(text, label, lo, hi, window=len(text) if outside else DEFAULT_WINDOW, budget=budget)
    if placement is None:
        return _kept(text, label, start, end, lo, hi, where, scope, uid, ci, pi, report)
    if placement.kind == "exact" and valid:
        return _Placed(start, end)
    if not valid:
        problem = (
            "outside the text"
            if min(start, end) < 0 or max(start, end) > len(text)
            else "reversed"
            if end < start
            else "empty"
        )
        msg = (
            f"{where}: stored offsets [{start}, {end}) are "
            f"{problem}; label {short(label)} "
            f"placed at [{placement.start}, {placement.end})"
        )
    elif placement.kind == "label":
        msg = (
            f"{where}: label {short(label)} differs from the text at [{start}, {end}) "
            f"only in whitespace/encoding; offsets kept"
        )
    else:
        msg = (
            f"{where}: label {short(label)} not at stored [{start}, {end}) "
            f"(text there: {short(text[start:end])}); placed at "
            f"[{placement.start}, {placement.end})"
        )
    report.repairs.append(
        Repair(
            placement.kind if valid else "bad_offsets",
            msg,
            scope,
            uid,
            ci,
            pi,
            label,
            (start, end),
            (placement.start, placement.end),
        )
    )
    return _Placed(placement.start, placement.end)


def _kept(
    text: str,
    label: str,
    start: int,
    end: int,
    lo: int,
    hi: int,
    where: _Later,
    scope: str,
    uid: int,
    ci: int,
    pi: int,
    report: Report,
) -> _Placed | None:
    """A part whose label is found nowhere near its offsets: kept at its stored offsets (reversed
    ones put in order), as DUCView, which marks and scores by offsets, kept it; reported for review.
    A part whose offsets are outside the text (they say nothing then) or empty is left out, and
    its contributor still counts (see the readers)."""
    outside = min(start, end) < 0 or max(start, end) > len(text)
    if lo < hi and not outside:
        clipped = "" if (lo, hi) == (start, end) else f" as [{lo}, {hi})"
        report.repairs.append(
            Repair(
                "kept",
                f"{where}: label {short(label)} not found near stored [{start}, {end}); offsets "
                f"kept{clipped} (text there: {short(text[lo:hi])}): review",
                scope,
                uid,
                ci,
                pi,
                label,
                (start, end),
                (lo, hi),
            )
        )
        return _Placed(lo, hi, True)
    where_stored = "outside the text" if outside else "empty"
    report.rejects.append(
        Reject(
            "unplaced",
            f"{where}: label {short(label)} not found in the text, and stored [{start}, {end}) is "
            f"{where_stored}; part left out",
            scope,
            uid,
            ci,
            pi,
            label,
            (start, end),
        )
    )
    return None


def _in_reference(
    text: str,
    start: int,
    end: int,
    refs: list[RefSpan],
    where: _Later,
    uid: int,
    ci: int,
    pi: int,
    label: str,
    report: Report,
    kept: bool = False,
) -> _Located | None:
    """The reference a placed span lies in. A span ``kept`` at its stored offsets (its label found
    nowhere) that strays out of its reference is clipped to the reference it overlaps most."""
    for ref in refs:
        if ref.base <= start and end <= ref.end:
            return _Located(start, end, ref)
    if kept:
        ref = max(refs, key=lambda r: min(end, r.end) - max(start, r.base), default=None)
        if ref is not None and max(start, ref.base) < min(end, ref.end):
            s, e = max(start, ref.base), min(end, ref.end)
            report.repairs.append(
                Repair(
                    "clipped",
                    f"{where}: kept span [{start}, {end}) strays out of reference {ref.id}; clipped to [{s}, {e})",
                    "pyramid",
                    uid,
                    ci,
                    pi,
                    label,
                    (start, end),
                    (s, e),
                )
            )
            return _Located(s, e, ref)
    # A span that overlaps one reference and exceeds it only by blanks (e.g. a trailing newline
    # into the trimmed blank lines) is clipped to the reference.
    for ref in refs:
        s, e = max(start, ref.base), min(end, ref.end)
        if s < e and text[start:s].strip() == "" and text[e:end].strip() == "":
            report.repairs.append(
                Repair(
                    "clipped",
                    f"{where}: span [{start}, {end}) exceeds reference {ref.id} by blanks; clipped to [{s}, {e})",
                    "pyramid",
                    uid,
                    ci,
                    pi,
                    label,
                    (start, end),
                    (s, e),
                )
            )
            return _Located(s, e, ref)
    overlapping = [r.id for r in refs if max(start, r.base) < min(end, r.end)]
    if len(overlapping) > 1:
        kind, why = "crosses_references", f"crosses references {', '.join(overlapping)}"
    else:
        kind, why = "outside_references", "lies outside every reference text (in a header?)"
    report.rejects.append(
        Reject(
            kind, f"{where}: span [{start}, {end}) {why}; part left out", "pyramid", uid, ci, pi, label, (start, end)
        )
    )
    return None


# --------------------------------------------------------------------------- pyramid


def _parse_pyramid_element(el: Element, report: Report, where: str, budget: WorkBudget) -> Pyramid:
    regex_el = el.find("startDocumentRegEx")
    header_regex = None
    if regex_el is not None:
        header_regex = "".join(regex_el.itertext())
        if not header_regex.strip():
            header_regex = None
    text_el = el.find("text")
    if text_el is None:
        raise DucViewError(f"{where}: <pyramid> has no <text> element")
    text = _lines_text(text_el, f"{where} <text>")
    split = split_references(text, header_regex, budget)
    if split.note:
        report.repairs.append(
            Repair(
                "header_regex", f"{where}: {split.note}; used the default header regex {split.regex_used!r}", "pyramid"
            )
        )
    refs = split.refs
    u16 = Utf16Offsets(text)

    m = re.match(r"#([0-9]+)[ \t]*(?:\n|$)", text)
    if m and int(m.group(1)) != len(refs):
        report.legacy.append(
            LegacyIssue(
                "reference_count_mismatch",
                f"{where}: the text announces {m.group(1)} references, {len(refs)} headers were found",
                references=tuple(r.id for r in refs),
            )
        )

    scus: list[SCU] = []
    seen: set[int] = set()
    for si, scu_el in enumerate(el.findall("scu")):
        swhere = f"{where} <scu> {si + 1}"
        uid = _int_attr(scu_el, "uid", swhere)
        if uid == 0:
            raise DucViewError(f"{swhere}: uid 0 is reserved for non-matching peer content")
        if not 0 < uid <= UID_MAX:
            raise DucViewError(f"{swhere}: uid {uid} is out of range (1 to {UID_MAX})")
        if uid in seen:
            raise DucViewError(f"{swhere}: duplicate SCU uid {uid}")
        seen.add(uid)
        swhere = f"{where} SCU {uid}"
        label = scu_el.get("label")
        comment = scu_el.get("comment") or ""
        contributors: list[Contributor] = []
        contributor_els = scu_el.findall("contributor")
        for ci, c_el in enumerate(contributor_els):
            cwhere = _Later(lambda swhere=swhere, ci=ci: f"{swhere}, <contributor> {ci + 1}")
            clabel = c_el.get("label")
            ccomment = c_el.get("comment") or ""
            parts: list[tuple[int, int, RefSpan]] = []
            changed = clabel is None
            clabel = clabel or ""
            raw = _read_parts(c_el, cwhere, u16, text)
            notes: list[str] = []
            rejected_before = len(report.rejects)
            for pi, (plabel, s, e) in enumerate(raw):
                w = _where("pyramid", uid, ci, pi, clabel)
                placed = _place(text, plabel, s, e, w, "pyramid", uid, ci, pi, report, budget)
                if placed is None:
                    changed = True
                    continue
                if placed.kept:
                    notes.append(KEPT_NOTE)
                if placed[:2] != (s, e) or text[placed.start : placed.end] != plabel:
                    changed = True
                loc = _in_reference(text, placed.start, placed.end, refs, w, uid, ci, pi, plabel, report, placed.kept)
                if loc is None:
                    changed = True
                    continue
                if (loc.start, loc.end) != placed[:2]:
                    changed = True
                parts.append((loc.start, loc.end, loc.ref))
            if not parts:
                # One entry for the contributor, saying why each of its parts went.
                reasons = [r.message for r in report.rejects[rejected_before:]]
                del report.rejects[rejected_before:]
                report.rejects.append(
                    Reject(
                        "empty_contributor",
                        f"{_where('pyramid', uid, ci, None, clabel)}: no part could be placed, "
                        f"contributor left out ({'; '.join(reasons)})",
                        "pyramid",
                        uid,
                        ci,
                        None,
                        clabel,
                    )
                )
                continue
            if changed:
                clabel = derived_label([text[s:e] for s, e, _ in sorted(parts, key=lambda p: p[0])])
            contributors.append(
                Contributor(
                    clabel, ccomment, [Part(ref.id, s - ref.base, e - ref.base) for s, e, ref in parts], _review(notes)
                )
            )
        if not contributors:
            report.rejects.append(
                Reject(
                    "empty_scu",
                    f"SCU {uid} ({short(label or '', 40)}): no contributor left; SCU left out",
                    "pyramid",
                    uid,
                    None,
                    None,
                    label,
                )
            )
            continue
        if label is None:
            label = contributors[0].label
            report.repairs.append(
                Repair(
                    "missing_label",
                    f"SCU {uid} has no label: took its first contributor's, {short(label, 40)}",
                    "pyramid",
                    uid,
                )
            )
        scus.append(SCU(uid, label, comment, contributors))
        _legacy_checks(scus[-1], {r.id: i for i, r in enumerate(refs)}, report)

    references = [Reference(r.id, r.header, text[r.base : r.end]) for r in refs]
    return Pyramid(references, scus, header_regex)


_PYRAMID_END = b"</pyramid>"


@dataclass
class _KnownPyramid:
    """An embedded pyramid read once: what its first file gave (the parsed pyramid, the report of
    its parsing, the uids its <scu> elements carry, kept or not)."""

    pyramid: Pyramid
    report: Report
    file_uids: frozenset[int]


def _prefix_key(data: bytes) -> tuple[bytes, int, int] | None:
    """The memo key of a .pan's embedded pyramid: a digest of the file's bytes up to the first
    ``</pyramid>`` after the first ``<pyramid``, and those two offsets.

    The key covers everything before the pyramid too (declaration, DTD, root tag), so two files
    with one key are the same bytes up to there, and expat, which reads left to right, reads that
    prefix the same way in both: if the first file's pyramid element lay exactly there (checked
    when it was memoised), so does the second's, and cutting it out leaves the rest of the document
    as it is."""
    start = data.find(b"<pyramid")
    end = data.find(_PYRAMID_END, start) if start >= 0 else -1
    if end < 0:
        return None
    end += len(_PYRAMID_END)
    return hashlib.sha1(data[:end]).digest(), start, end


def _without_known_pyramid(data: bytes, key) -> Element | None:
    """The document with its (memoised) pyramid element cut out; None if that reading fails (the
    whole file is then read as any other, for the right message or repair).

    One pass of the tree builder, without ``_fromstring``'s first pass that refuses entity
    declarations and external references: everything up to the end of the pyramid (the XML
    declaration, the DTD, the root tag) is byte for byte a prefix that pass already accepted in
    the file the pyramid was memoised from (``_prefix_key``), and what follows lies inside the
    root element, where a declaration is not well-formed XML (the builder refuses it)."""
    _, start, end = key
    try:
        return ET.fromstring(data[:start] + data[end:])
    except (ParseError, LookupError, ValueError, UnicodeError):
        return None


def _legacy_checks(scu: SCU, ref_order: dict[str, int], report: Report) -> None:
    by_ref: dict[str, list[int]] = defaultdict(list)
    for ci, c in enumerate(scu.contributors):
        refs = list(dict.fromkeys(p.reference for p in c.parts))
        if len(refs) > 1:
            report.legacy.append(
                LegacyIssue(
                    "cross_reference_contributor",
                    f"SCU {scu.uid}: contributor {ci + 1} "
                    f"({short(c.label, 40)}) has parts in references "
                    f"{', '.join(refs)}; kept as it is",
                    scu.uid,
                    (ci,),
                    tuple(refs),
                )
            )
        # the contributor's reference is the one holding its first part in text order
        home = min(c.parts, key=lambda p: (ref_order[p.reference], p.start)).reference
        by_ref[home].append(ci)
    for ref, cis in by_ref.items():
        if len(cis) > 1:
            report.legacy.append(
                LegacyIssue(
                    "same_reference_contributors",
                    f"SCU {scu.uid}: contributors "
                    f"{', '.join(str(ci + 1) for ci in cis)} all come from reference "
                    f"{ref}; kept as they are",
                    scu.uid,
                    tuple(cis),
                    (ref,),
                )
            )


def parse_pyramid(
    data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES, budget: WorkBudget | None = None
) -> tuple[Pyramid, Report]:
    """Parse a .pyr file (a .pan is accepted too: its pyramid is returned).

    ``budget`` bounds the time spent on patterns the file supplies (default: one second)."""
    report = Report()
    root = _load_xml(_checked_bytes(data, max_bytes), report)
    if root.tag == "peerAnnotation":
        el = root.find("pyramid")
        if el is None:
            raise DucViewError("<peerAnnotation> has no <pyramid> element")
        root = el
    if root.tag != "pyramid":
        raise DucViewError(f"the root element is <{root.tag}>, expected <pyramid>")
    return _parse_pyramid_element(root, report, "pyramid", budget or WorkBudget()), report


# --------------------------------------------------------------------------- peer annotation


def parse_peer_annotation(
    data: bytes,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    budget: WorkBudget | None = None,
    pyramids: dict | None = None,
) -> tuple[PeerAnnotationFile, Report]:
    """Parse a .pan file: the pyramid it holds, the peer text and the peer's SCU matches.

    ``pyramids``, a dict kept across the files of one import, memoises the embedded pyramids by
    their bytes: the .pan files of a topic carry the same pyramid, read once (the returned
    ``Pyramid`` is then shared: treat it as read-only)."""
    report = Report()
    budget = budget or WorkBudget()
    data = _checked_bytes(data, max_bytes)
    key = _prefix_key(data) if pyramids is not None else None
    known = pyramids.get(key) if key is not None else None
    root = _without_known_pyramid(data, key) if known is not None else None
    span = None
    if root is None:  # not seen yet (or not memoisable): the whole file
        known, span = None, _PyramidSpan(data) if key is not None else None
        root = _load_xml(data, report, span)
    if root.tag != "peerAnnotation":
        raise DucViewError(f"the root element is <{root.tag}>, expected <peerAnnotation>")
    pyr_el = root.find("pyramid") if known is None else None
    if pyr_el is None and known is None:
        raise DucViewError("<peerAnnotation> has no <pyramid> element")
    ann = root.find("annotation")
    if ann is None:
        raise DucViewError("<peerAnnotation> has no <annotation> element")
    if known is None:
        own = Report()
        known = _KnownPyramid(
            _parse_pyramid_element(pyr_el, own, "pyramid", budget),
            own,
            frozenset(
                int(u) for u in (s.get("uid", "").strip() for s in pyr_el.findall("scu")) if _INT_RE.fullmatch(u)
            ),
        )
        if span is not None and (span.start, span.end) == key[1:] and not report.repairs:
            pyramids[key] = known
    pyramid, file_uids = known.pyramid, known.file_uids
    report.repairs += known.report.repairs
    report.rejects += known.report.rejects
    report.legacy += known.report.legacy
    text_el = ann.find("text")
    if text_el is None:
        raise DucViewError("<annotation> has no <text> element")
    text = _lines_text(text_el, "annotation <text>")
    u16 = Utf16Offsets(text)

    kept_uids = {s.uid for s in pyramid.scus}
    by_uid: dict[int, list[PeerMatch]] = defaultdict(list)
    non_matching: list[PeerMatch] = []
    comments: dict[int, str] = {}
    for si, ps_el in enumerate(ann.findall("peerscu")):
        swhere = _Later(lambda si=si: f"annotation <peerscu> {si + 1}")
        uid = _int_attr(ps_el, "uid", swhere)
        if uid != 0 and uid not in file_uids:
            raise DucViewError(f"{swhere}: uid {uid} is not an SCU of the pyramid")
        comment = ps_el.get("comment")
        if comment:
            comments[uid] = comment
        for ci, c_el in enumerate(ps_el.findall("contributor")):
            cwhere = _Later(lambda swhere=swhere, uid=uid, ci=ci: f"{swhere} (uid {uid}), <contributor> {ci + 1}")
            clabel = c_el.get("label")
            ccomment = c_el.get("comment") or ""
            raw = _read_parts(c_el, cwhere, u16, text)
            parts: list[PeerPart] = []
            notes: list[str] = []
            changed = clabel is None
            clabel = clabel or ""
            for pi, (plabel, s, e) in enumerate(raw):
                placed = _place(
                    text, plabel, s, e, _where("peer", uid, ci, pi, clabel), "peer", uid, ci, pi, report, budget
                )
                if placed is None:
                    changed = True
                    continue
                if placed.kept:
                    notes.append(KEPT_NOTE)
                changed |= placed[:2] != (s, e) or text[placed.start : placed.end] != plabel
                parts.append(PeerPart(placed.start, placed.end))
            if not parts:
                # DUCView scored the match whatever its parts: it stays, without evidence.
                notes.append(EVIDENCE_LOST_NOTE)
                report.repairs.append(
                    Repair(
                        "kept",
                        f"{_where('peer', uid, ci, None, clabel)}: {EVIDENCE_LOST_NOTE}; "
                        "the match is kept (it counts, as in the file's own scores)",
                        "peer",
                        uid,
                        ci,
                        None,
                        clabel,
                    )
                )
            if uid != 0 and uid not in kept_uids:
                report.rejects.append(
                    Reject(
                        "scu_dropped",
                        f"{_where('peer', uid, ci, None, clabel)}: its SCU was left out of the pyramid; match left out",
                        "peer",
                        uid,
                        ci,
                        None,
                        clabel,
                    )
                )
                continue
            if changed:
                clabel = derived_label([text[p.start : p.end] for p in sorted(parts, key=lambda p: p.start)])
            match = PeerMatch(uid, clabel, ccomment, parts, _review(notes))
            (non_matching if uid == 0 else by_uid[uid]).append(match)

    matches = [m for scu in pyramid.scus for m in by_uid.get(scu.uid, [])]
    score = None
    score_el = root.find("score")
    if score_el is not None:
        score = {child.tag: (child.text or "").strip() for child in score_el}
    return (
        PeerAnnotationFile(pyramid, text, matches, non_matching, score, comments),
        report,
    )

"""Write DUCView pyramid (.pyr) and peer annotation (.pan) files.

The output has the DUCView 1.4 inline DTD (1.5 with ``<score>`` when a score is given), is UTF-8
and valid against its DTD (DUCView parses with a validating parser). Layout of the pyramid text,
as in the NIST files::

    #3                    number of references
    (2 empty lines)
    ---------------       dashes (at least 15)
    D0601.M.250.A.A       Reference.header (Reference.id when the header is empty)
    ---------------
    (empty line)
    text of the reference
    (2 empty lines before the next dash line)

``startDocumentRegEx`` is the pyramid's own regex when it splits the written text into the same
references, otherwise a regex matching exactly the written headers (valid in Java and Python).
Offsets are written as Java UTF-16 offsets into that whole text; part labels are the texts they
cover and contributor labels the part texts in text order joined with ``...``. A ``\r`` in a
text is written as a line break (same length, so offsets stay valid).
"""

from __future__ import annotations

import re
from collections import defaultdict

from annotation.formats._text import Utf16Offsets, derived_label, short
from annotation.formats.errors import DucViewError
from annotation.formats.model import NON_MATCHING_LABEL, PeerAnnotationFile, PeerMatch, Pyramid
from annotation.formats.references import compile_header_regex, java_escape, reference_ids, split_references

__all__ = ["write_pyramid", "write_peer_annotation", "SCORE_TAGS", "OPTIONAL_SCORE_TAGS"]

SCORE_TAGS = (
    "totalscu",
    "uniquescu",
    "scusNotInPyr",
    "totalWeight",
    "maxScoreTotalscu",
    "qualityScore",
)
OPTIONAL_SCORE_TAGS = ("averagescu", "maxScoreAveragescu", "coverageScore", "comprehensiveScore")


_PYRAMID_DTD = """\
 <!ELEMENT pyramid (startDocumentRegEx?,text,scu*)>
 <!ELEMENT startDocumentRegEx (#PCDATA)>
 <!ELEMENT text (line*)>
 <!ELEMENT line (#PCDATA)>
 <!ELEMENT scu (contributor)+>
 <!ATTLIST scu uid CDATA #REQUIRED
               label CDATA #REQUIRED
               comment CDATA #IMPLIED>
 <!ELEMENT contributor (part)+>
 <!ATTLIST contributor label CDATA #REQUIRED
                       comment CDATA #IMPLIED>
 <!ELEMENT part EMPTY>
 <!ATTLIST part label CDATA #REQUIRED
                start CDATA #REQUIRED
                end   CDATA #REQUIRED>
"""


def _score_model(tags: list[str]) -> str:
    """The content model of <score>: DUCView 1.5's when the tags fit it, else the tags as given."""
    required = list(SCORE_TAGS)
    optional = [t for t in tags if t in OPTIONAL_SCORE_TAGS]
    if (
        tags[: len(required)] == required
        and tags[len(required) :] == optional
        and (optional == [t for t in OPTIONAL_SCORE_TAGS if t in optional])
    ):
        return ", ".join(required + [t + "?" for t in OPTIONAL_SCORE_TAGS])
    return ", ".join(tags) if tags else "EMPTY"


def _peer_dtd(score_tags: list[str] | None) -> str:
    with_score = score_tags is not None
    head = (
        f" <!ELEMENT peerAnnotation (pyramid,annotation{',score?' if with_score else ''})>\n"
        " <!ELEMENT annotation (text,peerscu+)>\n"
        " <!ELEMENT peerscu (contributor)*>\n"
        " <!ATTLIST peerscu uid CDATA #REQUIRED\n"
        "                   label CDATA #REQUIRED\n"
        "                   comment CDATA #IMPLIED>\n"
    )
    dtd = head + _PYRAMID_DTD
    if score_tags is not None:
        model = _score_model(score_tags)
        dtd += f" <!ELEMENT score ({model})>\n" if model != "EMPTY" else " <!ELEMENT score EMPTY>\n"
        declared = list(SCORE_TAGS + OPTIONAL_SCORE_TAGS) if "?" in model else score_tags
        for tag in declared:
            dtd += f" <!ELEMENT {tag} (#PCDATA)>\n"
    return dtd


_XML_INVALID_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _check_xml_chars(s: str, what: str) -> None:
    m = _XML_INVALID_RE.search(s)
    if m:
        raise DucViewError(
            f"{what} holds the character U+{ord(m.group()):04X} at {m.start()}, which XML 1.0 cannot represent"
        )


def _esc_text(s: str, what: str) -> str:
    _check_xml_chars(s, what)
    return (
        s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("\r", "&#13;")
    )


def _esc_attr(s: str, what: str) -> str:
    _check_xml_chars(s, what)
    return (
        s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\n", "&#10;")
        .replace("\r", "&#13;")
        .replace("\t", "&#9;")
    )


def _text_lines(text: str, what: str) -> list[str]:
    return [f"  <line>{_esc_text(line, what)}</line>" for line in text.split("\n")]


def _layout(pyramid: Pyramid) -> tuple[str, dict[str, int], list[str]]:
    """The whole pyramid text, the base offset of every reference, the header lines."""
    headers = []
    for ref in pyramid.references:
        header = ref.header if ref.header.strip() else ref.id
        if "\n" in header or "\r" in header:
            raise DucViewError(f"reference {ref.id!r}: its header holds a line break")
        headers.append(header)
    try:
        ids = reference_ids(headers)
    except DucViewError as exc:
        raise DucViewError(f"cannot write the references: {exc}") from None
    for ref, header, rid in zip(pyramid.references, headers, ids, strict=True):
        if rid != ref.id:
            raise DucViewError(f"reference {ref.id!r}: its header {header!r} would be read back as id {rid!r}")
    lines = [f"#{len(pyramid.references)}", ""]
    bases: dict[str, int] = {}
    pos = len(lines[0]) + 1 + len(lines[1]) + 1
    for i, (ref, header) in enumerate(zip(pyramid.references, headers, strict=True)):
        dashes = "-" * max(15, len(header))
        block = ([""] if i else []) + ["", dashes, header, dashes, ""]
        for line in block:
            lines.append(line)
            pos += len(line) + 1
        bases[ref.id] = pos
        for line in ref.text.replace("\r", "\n").split("\n"):
            lines.append(line)
            pos += len(line) + 1
    return "\n".join(lines), bases, headers


def _choose_regex(pyramid: Pyramid, text: str, bases: dict[str, int], headers: list[str]) -> str:
    generated = r"-+\n *(?:" + "|".join(java_escape(h) for h in dict.fromkeys(headers)) + r")[ \t]*\n-+\n"

    header_of = {ref.id: h for ref, h in zip(pyramid.references, headers, strict=True)}

    def splits_as_written(regex: str) -> bool:
        if "]]>" in regex:
            return False
        pattern, _ = compile_header_regex(regex)
        if pattern is None:
            return False
        try:
            split = split_references(text, regex)
        except DucViewError:
            return False
        if split.note or len(split.refs) != len(pyramid.references):
            return False
        for span, ref in zip(split.refs, pyramid.references, strict=True):
            base = bases[ref.id]
            if (
                span.id != ref.id
                or span.header != header_of[ref.id]
                or not (span.region_start <= base and base + len(ref.text) <= span.region_end)
            ):
                return False
        return True

    if pyramid.header_regex is not None and splits_as_written(pyramid.header_regex):
        return pyramid.header_regex
    if not splits_as_written(generated):
        raise DucViewError(
            "cannot write the references: a reference text holds lines that look like a reference header"
        )
    return generated


def _pyramid_body(pyramid: Pyramid) -> list[str]:
    text, bases, headers = _layout(pyramid)
    regex = _choose_regex(pyramid, text, bases, headers)
    u16 = Utf16Offsets(text)
    refs = {r.id: r for r in pyramid.references}
    out = [f"<startDocumentRegEx><![CDATA[{regex}]]></startDocumentRegEx>", " <text>"]
    out += _text_lines(text, "the pyramid text")
    out.append(" </text>")
    uids: set[int] = set()
    for scu in pyramid.scus:
        if scu.uid == 0:
            raise DucViewError(f"SCU {short(scu.label)}: uid 0 is reserved")
        if scu.uid in uids:
            raise DucViewError(f"duplicate SCU uid {scu.uid}")
        uids.add(scu.uid)
        if not scu.contributors:
            raise DucViewError(f"SCU {scu.uid}: no contributor (DUCView needs at least one)")
        comment = f' comment="{_esc_attr(scu.comment, f"SCU {scu.uid}")}"' if scu.comment else ""
        out.append(f' <scu uid="{scu.uid}" label="{_esc_attr(scu.label, f"SCU {scu.uid}")}"{comment}>')
        for ci, c in enumerate(scu.contributors):
            where = f"SCU {scu.uid}, contributor {ci + 1}"
            if not c.parts:
                raise DucViewError(f"{where}: no part (DUCView needs at least one)")
            spans = []
            for pi, p in enumerate(c.parts):
                ref = refs.get(p.reference)
                if ref is None:
                    raise DucViewError(f"{where}, part {pi + 1}: unknown reference {p.reference!r}")
                if not (0 <= p.start < p.end <= len(ref.text)):
                    raise DucViewError(
                        f"{where}, part {pi + 1}: span [{p.start}, {p.end}) is empty or outside the "
                        f"text of reference {p.reference!r} (length {len(ref.text)})"
                    )
                spans.append((bases[p.reference] + p.start, bases[p.reference] + p.end))
            # text order; parts with the same start keep their order (as DUCView does)
            clabel = derived_label([text[s:e] for s, e in sorted(spans, key=lambda se: se[0])])
            ccomment = f' comment="{_esc_attr(c.comment, where)}"' if c.comment else ""
            out.append(f'  <contributor label="{_esc_attr(clabel, where)}"{ccomment}>')
            for s, e in spans:
                out.append(
                    f'   <part label="{_esc_attr(text[s:e], where)}" start="{u16.to_u16(s)}" end="{u16.to_u16(e)}"/>'
                )
            out.append("  </contributor>")
        out.append(" </scu>")
    return out


def write_pyramid(pyramid: Pyramid) -> bytes:
    """A .pyr file (UTF-8, DUCView 1.4 DTD) that DUCView opens and parse_pyramid reads back."""
    out = ['<?xml version="1.0"?>', "<!DOCTYPE pyramid [", _PYRAMID_DTD, "]>", "", "<pyramid>"]
    out += _pyramid_body(pyramid)
    out.append("</pyramid>")
    return ("\n".join(out) + "\n").encode("utf-8")


def _peer_contributor(m: PeerMatch, text: str, u16: Utf16Offsets, where: str) -> list[str]:
    """A match as DUCView writes it. A match without evidence (its file's parts lay outside the text,
    their labels nowhere: kept because DUCView scored it) gets one empty part, as released files
    have: the DTD wants a part, DUCView counts the contributor, and the readers keep it without
    evidence again, so the file scores as the annotation does."""
    for pi, p in enumerate(m.parts):
        if not (0 <= p.start < p.end <= len(text)):
            raise DucViewError(
                f"{where}, part {pi + 1}: span [{p.start}, {p.end}) is empty or outside the peer text "
                f"(length {len(text)})"
            )
    label = (
        derived_label([text[p.start : p.end] for p in sorted(m.parts, key=lambda p: p.start)]) if m.parts else m.label
    )
    comment = f' comment="{_esc_attr(m.comment, where)}"' if m.comment else ""
    out = [f'  <contributor label="{_esc_attr(label, where)}"{comment}>']
    for p in m.parts:
        out.append(
            f'   <part label="{_esc_attr(text[p.start : p.end], where)}" '
            f'start="{u16.to_u16(p.start)}" end="{u16.to_u16(p.end)}"/>'
        )
    if not m.parts:
        out.append('   <part label="" start="0" end="0"/>')
    out.append("  </contributor>")
    return out


def write_peer_annotation(pan: PeerAnnotationFile) -> bytes:
    """A .pan file: the pyramid, the peer text, one peerscu per pyramid SCU (empty ones too,
    labelled ``(weight) label``) and the uid 0 peerscu for non-matching content; a DUCView 1.5
    ``<score>`` element (and its DTD) only when ``pan.score`` is not None."""
    score_tags = None if pan.score is None else [str(tag) for tag in pan.score]
    for tag in score_tags or []:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", tag):
            raise DucViewError(f"score: {tag!r} is not a valid element name")
    out = [
        '<?xml version="1.0"?>',
        "<!DOCTYPE peerAnnotation [",
        _peer_dtd(score_tags),
        "]>",
        "",
        "<peerAnnotation>",
        "<pyramid>",
    ]
    out += _pyramid_body(pan.pyramid)
    out += ["</pyramid>", "<annotation>", " <text>"]
    text = pan.text.replace("\r", "\n")
    out += _text_lines(text, "the peer text")
    out.append(" </text>")
    u16 = Utf16Offsets(text)
    by_uid: dict[int, list[PeerMatch]] = defaultdict(list)
    for m in pan.matches:
        if m.scu_uid == 0:
            raise DucViewError("a match has scu_uid 0: non-matching content goes in non_matching")
        by_uid[m.scu_uid].append(m)
    known = {s.uid for s in pan.pyramid.scus}
    unknown = sorted(set(by_uid) - known)
    if unknown:
        raise DucViewError(f"matches refer to SCU uid {unknown[0]}, which the pyramid lacks")
    groups = [(s.uid, f"({s.weight}) {s.label}") for s in pan.pyramid.scus]
    groups.append((0, NON_MATCHING_LABEL))
    for uid, label in groups:
        where = f"peer SCU {uid}"
        comment = pan.peer_scu_comments.get(uid, "")
        cattr = f' comment="{_esc_attr(comment, where)}"' if comment else ""
        out.append(f' <peerscu uid="{uid}" label="{_esc_attr(label, where)}"{cattr}>')
        for ci, m in enumerate(by_uid.get(uid, []) if uid else pan.non_matching):
            out += _peer_contributor(m, text, u16, f"{where}, contributor {ci + 1}")
        out.append(" </peerscu>")
    out.append("</annotation>")
    if pan.score is not None:
        out.append("<score>")
        for tag, value in pan.score.items():
            out.append(f" <{tag}>{_esc_text(str(value), 'score')}</{tag}>")
        out.append("</score>")
    out.append("</peerAnnotation>")
    return ("\n".join(out) + "\n").encode("utf-8")

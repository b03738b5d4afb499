"""Autoannotate, as DUCView offers it, but as suggestions the annotator accepts one by one (never
applied silently).

Two sources, both pure functions over texts (the benchmark runs them on DUCView files):
- ``from_pyramid``: a stretch of one peer sentence holding most content words of a contributor
  of an SCU (references paraphrase, so an exact match would be rare);
- ``from_earlier``: the very words (case and spacing aside) that the same annotator matched to an
  SCU in another peer of the topic (extractive systems copy the same source sentences).
``suggestions_for(annotation)`` reads them from the database. The blind rule holds because only the
annotation's own annotator's other annotations are ever read, never another annotator's work.

Offsets are Python string indices (Unicode code points), end-exclusive, as everywhere in the API.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

WORD = re.compile(r"\w+(?:['’]\w+)*")
SENTENCE_END = re.compile(r"[.!?;:]+(?=\s|$)|\n+")
STOP = frozenset(
    "a an the of to in on at for and or but nor is are was were be been being by with as that this these those it its "
    "from has have had not no so than then there their they them he she his her we our you your i which who whom whose "
    "what when where while will would can could may might must shall should do does did also into about over after before "
    "up out more most other some such only all any each both s".split()
)
MIN_WORDS = 2        # a suggestion rests on at least two content words
PYRAMID_SHARE = 0.6  # share of a contributor's content words found in one peer sentence


@dataclass(frozen=True)
class Suggestion:
    scu: int                           # the SCU's id
    parts: tuple[tuple[int, int], ...]  # peer spans
    source: str                        # "pyramid" or "earlier"
    why: str                           # for the annotator: what it rests on

    def as_dict(self) -> dict:
        return {"scu": self.scu, "parts": [{"start": s, "end": e} for s, e in self.parts], "source": self.source, "why": self.why}


def _stem(word: str) -> str:
    """Lower case, a plural or possessive "s" dropped: enough to meet "dams" with "dam"."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w


def _content_words(text: str) -> list[tuple[str, int, int]]:
    return [(_stem(m.group()), m.start(), m.end()) for m in WORD.finditer(text) if _stem(m.group()) not in STOP]


def _sentences(text: str) -> list[tuple[int, int]]:
    out, start = [], 0
    for m in SENTENCE_END.finditer(text):
        if m.end() > start:
            out.append((start, m.end()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return out


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def from_pyramid(peer: str, contributors: Iterable[tuple[int, str]]) -> list[Suggestion]:
    """For each SCU (``contributors``: (scu id, contributor text) pairs), the peer sentence holding
    the largest share (at least ``PYRAMID_SHARE``, at least ``MIN_WORDS`` words) of one of its
    contributors' content words; the suggested span runs from the first to the last word found."""
    sentences = [(s, e, _content_words(peer[s:e])) for s, e in _sentences(peer)]
    best: dict[int, tuple[float, int, Suggestion]] = {}
    for scu, text in contributors:
        wanted = {w for w, _, _ in _content_words(text)}
        if len(wanted) < MIN_WORDS:
            continue
        for start, _, words in sentences:
            hits = [(w, s, e) for w, s, e in words if w in wanted]
            found = {w for w, _, _ in hits}
            share = len(found) / len(wanted)
            if len(found) < MIN_WORDS or share < PYRAMID_SHARE:
                continue
            span = (start + hits[0][1], start + hits[-1][2])
            rank = (share, len(found))
            if scu not in best or rank > best[scu][:2]:
                why = f"{len(found)} of the {len(wanted)} content words of a contributor"
                best[scu] = (*rank, Suggestion(scu, (span,), "pyramid", why))
    return [s for *_, s in best.values()]


def _normalised(text: str) -> tuple[str, list[int]]:
    """Lower-cased text with runs of white space as one space, and each character's original index."""
    chars, index = [], []
    for i, ch in enumerate(text):
        if ch.isspace():
            if chars and chars[-1] == " ":
                continue
            ch = " "
        chars.append(ch.lower())
        index.append(i)
    return "".join(chars), index


def from_earlier(peer: str, earlier: Iterable[tuple[int, list[str], str]]) -> list[Suggestion]:
    """The same words in this peer as in the annotator's earlier matches (``earlier``: (scu id,
    the match's part texts, which peer) triples): every part found, in order, as a whole phrase of
    at least ``MIN_WORDS`` words."""
    text, index = _normalised(peer)
    out, seen = [], set()
    for scu, parts, where in earlier:
        phrases = [_normalised(p.strip())[0] for p in parts]
        if sum(len(WORD.findall(p)) for p in phrases) < MIN_WORDS or not all(phrases):
            continue
        at, spans = 0, []
        for phrase in phrases:
            found = _find_phrase(text, phrase, at)
            if found < 0:
                break
            spans.append((index[found], index[found + len(phrase) - 1] + 1))
            at = found + len(phrase)
        if len(spans) == len(phrases) and (scu, tuple(spans)) not in seen:
            seen.add((scu, tuple(spans)))
            out.append(Suggestion(scu, tuple(spans), "earlier", f"you matched the same words in peer {where}"))
    return out


def _find_phrase(text: str, phrase: str, start: int) -> int:
    """The first occurrence of ``phrase`` at or after ``start`` that starts and ends on word boundaries."""
    while True:
        found = text.find(phrase, start)
        if found < 0:
            return -1
        end = found + len(phrase)
        if (found == 0 or not text[found - 1].isalnum() or not phrase[0].isalnum()) and \
                (end == len(text) or not text[end].isalnum() or not phrase[-1].isalnum()):
            return found
        start = found + 1


def merge(existing: Iterable[tuple[int | None, tuple[tuple[int, int], ...]]], *groups: list[Suggestion]) -> list[Suggestion]:
    """The suggestions in text order, the earlier-annotation ones first for a span, without those
    the annotation already has (a match of the same SCU overlapping the span)."""
    have = [(scu, spans) for scu, spans in existing]
    out: list[Suggestion] = []
    for group in groups:
        for s in group:
            taken = have + [(o.scu, o.parts) for o in out]
            if any(scu == s.scu and any(_overlaps(a, b) for a in spans for b in s.parts) for scu, spans in taken):
                continue
            out.append(s)
    return sorted(out, key=lambda s: (s.parts[0][0], s.source != "earlier", s.scu))


def suggestions_for(annotation) -> list[dict]:
    """The suggestions for a peer annotation from its pyramid and from its own annotator's other
    annotations of the topic's peers against the same pyramid (never anyone else's)."""
    from annotation.models import ContributorPart, PeerMatchPart

    peer = annotation.peer.text
    references = {r.pk: r.text for r in annotation.pyramid.references.all()}
    contributors: dict[int, list[tuple[int, int, int]]] = {}
    for contributor, scu, reference, start, end in (
            ContributorPart.objects.filter(contributor__scu__pyramid=annotation.pyramid)
            .values_list("contributor_id", "contributor__scu_id", "reference_id", "start", "end").order_by("contributor_id", "start")):
        contributors.setdefault(contributor, []).append((scu, reference, start, end))
    pyramid_texts = [(parts[0][0], " ".join(references.get(ref, "")[s:e] for _, ref, s, e in parts)) for parts in contributors.values()]
    earlier: dict[int, tuple[int, list[str], str]] = {}
    if annotation.annotator_id is not None:
        rows = (PeerMatchPart.objects.filter(match__annotation__annotator_id=annotation.annotator_id, match__annotation__pyramid=annotation.pyramid,
                                             match__scu__isnull=False)
                .exclude(match__annotation=annotation)
                .values_list("match_id", "match__scu_id", "match__annotation__peer__text", "match__annotation__peer__external_id", "start", "end")
                .order_by("match_id", "start"))
        for match, scu, text, external_id, start, end in rows:
            earlier.setdefault(match, (scu, [], external_id))[1].append(text[start:end])
    existing = [(m.scu_id, tuple((p.start, p.end) for p in m.parts.all())) for m in annotation.matches.prefetch_related("parts")]
    found = merge(existing, from_earlier(peer, earlier.values()), from_pyramid(peer, pyramid_texts))
    return [s.as_dict() for s in found]

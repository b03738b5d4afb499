"""Autoannotate's text primitives: words, sentences, and the annotator's own earlier matches found
again, as DUCView offers autoannotate but as suggestions the annotator accepts one by one (never
applied silently).

- ``from_earlier``: the very words (case and spacing aside) that the same annotator matched to an
  SCU in another peer of the topic (extractive systems copy the same source sentences).
The candidates, their features and their ranking are in ``suggestion_features`` and
``suggestion_model``; ``peers.ranked_suggestions.suggestions_for(annotation)`` reads what they rest on
from the database. The blind rule holds because only the annotation's own annotator's other
annotations are ever read, never another annotator's work.

Offsets are Python string indices (Unicode code points), end-exclusive, as everywhere in the API.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

WORD = re.compile(r"\w+(?:['’]\w+)*")
SENTENCE_END = re.compile(r"[.!?;:]+(?=\s|$)|\n+")
STOP = frozenset(
    "a an the of to in on at for and or but nor is are was were be been being by with as that this these those it its "
    "from has have had not no so than then there their they them he she his her we our you your i which who whom whose "
    "what when where while will would can could may might must shall should do does did also into about "
    "over after before "
    "up out more most other some such only all any each both s".split()
)
MIN_WORDS = 2  # a suggestion rests on at least two content words


@dataclass(frozen=True)
class Suggestion:
    scu: int  # the SCU's id
    parts: tuple[tuple[int, int], ...]  # peer spans
    source: str  # "pyramid" or "earlier"
    why: str  # for the annotator: what it rests on
    confidence: float = 0.0  # how likely the annotator accepts it (0-1), the ranking's key

    def as_dict(self) -> dict:
        return {
            "scu": self.scu,
            "parts": [{"start": s, "end": e} for s, e in self.parts],
            "source": self.source,
            "why": self.why,
            "confidence": self.confidence,
        }


@lru_cache(maxsize=4096)
def _sentences(text: str) -> tuple[tuple[int, int], ...]:
    """The text's sentences as (start, end); kept for the texts seen lately: a reference is split for
    every contributor it holds (the sentences around each, ``contributor_context``)."""
    out, start = [], 0
    for m in SENTENCE_END.finditer(text):
        if m.end() > start:
            out.append((start, m.end()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return tuple(out)


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
        if (found == 0 or not text[found - 1].isalnum() or not phrase[0].isalnum()) and (
            end == len(text) or not text[end].isalnum() or not phrase[-1].isalnum()
        ):
            return found
        start = found + 1

"""DUCView pyramids of the same references as input of ``scoring.pyramid_agreement`` (no database).

Independent pyramids of the same summaries rarely hold byte-identical copies of them: the PyrEval
MATTER pyramids name the references ``1``..``5``, ``TCstudent1``.. or ``1.txt``.., and their texts
differ in spaces, line breaks and a few apostrophes. Comparing spans needs one text per reference,
so: reference i of every pyramid is reference i of the first (same count required, and texts that
are nearly the same, else the files are not of the same references), and every span is moved onto
the first pyramid's text through the character alignment of the two versions
(``difflib.SequenceMatcher``).
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
from collections.abc import Sequence

from annotation.formats.model import Part, Pyramid
from scoring.pyramid_agreement import Span, SpanContributor, SpanPyramid, SpanSCU

MIN_SIMILARITY = 0.9  # SequenceMatcher ratio below which two texts are not copies of one summary


class _Projection:
    """Maps span boundaries of ``source`` onto ``target``. A span start goes to the counterpart of
    the span's first character, a span end to just after the counterpart of its last one; a
    character in a changed stretch has the whole replacement as counterpart (nothing for a
    deletion). So text inserted inside a span joins it, text inserted at its edges does not."""

    def __init__(self, source: str, target: str):
        if source == target:
            self.similarity, ops = 1.0, [("equal", 0, len(source), 0, len(target))]
        else:
            matcher = difflib.SequenceMatcher(None, source, target, autojunk=False)
            self.similarity, ops = matcher.ratio(), matcher.get_opcodes()
        self._blocks = [op for op in ops if op[1] < op[2]]  # inserted stretches hold no source character
        self._starts = [op[1] for op in self._blocks]

    def __call__(self, offset: int, *, end: bool) -> int:
        char = offset - 1 if end else offset
        tag, i1, _, j1, j2 = self._blocks[bisect.bisect_right(self._starts, char) - 1]
        if tag == "equal":
            return j1 + (offset - i1)
        return j2 if end else j1


def onto_first(named: Sequence[tuple[str, Pyramid]]) -> list[Pyramid]:
    """``(name, parsed .pyr)`` pairs as pyramids over the references (ids, headers and texts) of
    the first one, every part moved onto those texts. A part that moves onto nothing is dropped,
    and so is a contributor left without parts; an SCU keeps its place even when it has no
    contributor left (``transfer.pyramid_sets`` leaves such SCUs out: DUCView needs one)."""
    if not named:
        return []
    _, first = named[0]
    out = []
    cache: dict[tuple[str, str], _Projection] = {}  # files often share their copies of the texts
    for name, pyramid in named:
        if len(pyramid.references) != len(first.references):
            raise ValueError(
                f"{name}: {len(pyramid.references)} references, the first pyramid has {len(first.references)}"
            )
        projections = {}
        for ref, canon in zip(pyramid.references, first.references, strict=True):
            key = (ref.text, canon.text)
            if key not in cache:
                cache[key] = _Projection(ref.text, canon.text)
            if cache[key].similarity < MIN_SIMILARITY:
                raise ValueError(
                    f"{name}: reference {ref.header!r} is not the first pyramid's {canon.header!r} "
                    f"(texts only {cache[key].similarity:.0%} alike)"
                )
            projections[ref.id] = (canon.id, cache[key])
        scus = []
        for scu in pyramid.scus:
            contributors = []
            for c in scu.contributors:
                parts = []
                for part in c.parts:
                    canon_id, project = projections[part.reference]
                    start, end = project(part.start, end=False), project(part.end, end=True)
                    if end > start:
                        parts.append(Part(canon_id, start, end))
                if parts:
                    contributors.append(dataclasses.replace(c, parts=parts))
            scus.append(dataclasses.replace(scu, contributors=contributors))
        out.append(dataclasses.replace(pyramid, references=list(first.references), scus=scus))
    return out


def span_pyramids(named: Sequence[tuple[str, Pyramid]]) -> tuple[SpanPyramid, ...]:
    """``(name, parsed .pyr)`` pairs as span pyramids over the references of the first one."""
    return tuple(
        SpanPyramid(
            name,
            tuple(r.id for r in p.references),
            tuple(
                SpanSCU(
                    scu.uid,
                    tuple(
                        SpanContributor(tuple(Span(part.reference, part.start, part.end) for part in c.parts))
                        for c in scu.contributors
                    ),
                    scu.label,
                )
                for scu in p.scus
            ),
        )
        for (name, _), p in zip(named, onto_first(named), strict=True)
    )

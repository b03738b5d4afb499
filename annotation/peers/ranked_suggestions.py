"""Autoannotate from the database: ranked suggestions for a peer annotation, and the study's finished
annotations as training material.

One builder (``peer_case``) reads what a suggestion may rest on, at suggestion time and at training
time alike: the pyramid (SCU labels, contributors) and the topic's texts (for its word weights), as
``pyramids.suggestion_inputs`` reads them, and the annotation's OWN annotator's other annotations
against the same pyramid (their matches, and the texts of the finished ones with what was matched
where). Nothing of another annotator's annotation of any peer is read (the blind
rule).
"""

from __future__ import annotations

from collections.abc import Iterator

from annotation.pyramids.suggestion_features import ScuText
from annotation.pyramids.suggestion_inputs import pyramid_scus, topic_weights
from annotation.pyramids.suggestion_model import PeerCase, load, ranked
from annotation.pyramids.suggestions import Suggestion


def _earlier(annotation) -> list[tuple[int, list[str], str]]:
    """The annotation's own annotator's matches in their other annotations against the same pyramid."""
    from annotation.peers.models import PeerMatchPart

    if annotation.annotator_id is None:
        return []
    found: dict[int, tuple[int, list[str], str]] = {}
    rows = (
        PeerMatchPart.objects.filter(
            match__annotation__annotator_id=annotation.annotator_id,
            match__annotation__pyramid_id=annotation.pyramid_id,
            match__scu__isnull=False,
        )
        .exclude(match__annotation_id=annotation.pk)
        .values_list(
            "match_id",
            "match__scu_id",
            "match__annotation__peer__text",
            "match__annotation__peer__external_id",
            "start",
            "end",
        )
        .order_by("match_id", "start")
    )
    for match, scu, text, external_id, start, end in rows:
        found.setdefault(match, (scu, [], external_id))[1].append(text[start:end])
    return list(found.values())


def _seen(annotation, finishing: int | None = None) -> list[tuple[str, list[tuple[int, list[tuple[int, int]]]]]]:
    """The annotation's own annotator's FINISHED other annotations against the same pyramid, as (peer
    text, matches as (SCU id, spans)): a sentence they read and left without an SCU says the SCU is
    not there (an unfinished one says nothing yet). ``finishing``: one of their annotations taken
    as finished (the page reads the next peer's suggestions ahead while this one is shown; it asks
    again at "Done" if the annotation changed since). Another annotator's id there reads nothing."""
    from django.db.models import Q

    from annotation.peers.models import PeerAnnotation, PeerMatchPart

    if annotation.annotator_id is None:
        return []
    finished = (
        Q(status=PeerAnnotation.Status.DONE) | Q(pk=finishing) if finishing else Q(status=PeerAnnotation.Status.DONE)
    )
    done = (
        PeerAnnotation.objects.filter(finished, annotator_id=annotation.annotator_id, pyramid_id=annotation.pyramid_id)
        .exclude(pk=annotation.pk)
        .values_list("pk", "peer__text")
    )
    texts = dict(done)
    spans: dict[int, dict[int, tuple[int, list[tuple[int, int]]]]] = {pk: {} for pk in texts}
    for other, match, scu, start, end in (
        PeerMatchPart.objects.filter(match__annotation_id__in=texts, match__scu__isnull=False)
        .values_list("match__annotation_id", "match_id", "match__scu_id", "start", "end")
        .order_by("match_id", "start")
    ):
        spans[other].setdefault(match, (scu, []))[1].append((start, end))
    return [(texts[pk], list(spans[pk].values())) for pk in sorted(texts)]


def _matches(annotation) -> list[tuple[int, list[tuple[int, int]]]]:
    if annotation.pk is None:  # a peer opened but not acted on yet (``peers.assignments.unsaved_annotation``)
        return []
    return [
        (m.scu_id, [(p.start, p.end) for p in m.parts.all()])
        for m in annotation.matches.filter(scu__isnull=False).prefetch_related("parts")
    ]


def peer_case(annotation, scus=None, weights=None, finishing: int | None = None) -> PeerCase:
    """What the suggestions for ``annotation`` rest on, its own matches as ``expert`` (``finishing``:
    ``_seen``)."""
    return PeerCase(
        annotation.peer.text,
        scus if scus is not None else pyramid_scus(annotation.pyramid),
        weights if weights is not None else topic_weights(annotation.pyramid),
        _earlier(annotation),
        _matches(annotation),
        _seen(annotation, finishing),
    )


def suggestions_for(annotation, finishing: int | None = None) -> list[dict]:
    """The suggestions for a peer annotation, best first, each with its confidence; none where the
    annotation already matches the same SCU (overlapping spans). ``finishing``: ``_seen``."""
    case = peer_case(annotation, finishing=finishing)
    out = []
    for c, confidence in ranked(case, load()):
        parts = c.exact or (c.span,)
        if any(scu == c.scu and any(a < f and e < b for a, b in spans for e, f in parts) for scu, spans in case.expert):
            continue
        source = (
            "earlier"
            if c.features["earlier_exact"] or (c.features["earlier_wshare"] > c.features["contributor_wshare"])
            else "pyramid"
        )
        out.append(Suggestion(c.scu, parts, source, c.why, round(confidence, 3)).as_dict())
    return out


def study_cases() -> Iterator[tuple[str, PeerCase]]:
    """(topic, case) for each finished annotation of the study with a known annotator, its matches as
    the expert's (training material, as the annotations accumulate)."""
    from annotation.peers.models import PeerAnnotation

    cache: dict[int, tuple[list[ScuText], dict[str, float]]] = {}
    done = (
        PeerAnnotation.objects.filter(status=PeerAnnotation.Status.DONE, annotator__isnull=False)
        .select_related("peer", "pyramid")
        .order_by("pyramid_id", "annotator_id", "id")
    )
    for annotation in done.iterator(chunk_size=200):
        if annotation.pyramid_id not in cache:
            cache.clear()
            cache[annotation.pyramid_id] = (pyramid_scus(annotation.pyramid), topic_weights(annotation.pyramid))
        scus, weights = cache[annotation.pyramid_id]
        case = peer_case(annotation, scus, weights)
        if case.expert:
            yield str(annotation.pyramid.topic_id), case

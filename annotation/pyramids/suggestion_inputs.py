"""What a pyramid gives the suggestions to rest on: each SCU's label with the texts of its
contributors, and the topic's word weights (from its references and peers). Read alike for an
annotator's ranked suggestions (``peers.ranked_suggestions``, which adds the annotator's own earlier
matches) and for the automatic scores (``automatic_peer_scores``, which read no annotation).
"""

from __future__ import annotations

from annotation.corpus.models import PeerSummary
from annotation.pyramids.models import ContributorPart
from annotation.pyramids.suggestion_features import ScuText, contributor_context, word_weights


def pyramid_scus(pyramid) -> list[ScuText]:
    """The pyramid's SCUs in uid order, each with its label, the text each contributor covers and the
    reference sentences it lies in."""
    references = {r.pk: r.text for r in pyramid.references.all()}
    parts: dict[int, list[tuple[str, int, int]]] = {}
    scu_of: dict[int, int] = {}
    for contributor, scu, reference, start, end in (
        ContributorPart.objects.filter(contributor__scu__pyramid=pyramid)
        .values_list("contributor_id", "contributor__scu_id", "reference_id", "start", "end")
        .order_by("contributor_id", "start")
    ):
        parts.setdefault(contributor, []).append((references.get(reference, ""), start, end))
        scu_of[contributor] = scu
    by_scu: dict[int, tuple[list[str], list[str]]] = {}
    for contributor, its in parts.items():
        texts, contexts = by_scu.setdefault(scu_of[contributor], ([], []))
        texts.append(" ".join(text[start:end] for text, start, end in its))
        contexts.append(contributor_context(its))
    return [
        ScuText(pk, label, *by_scu.get(pk, ([], [])))
        for pk, label in pyramid.scus.order_by("uid").values_list("pk", "label")
    ]


def topic_weights(pyramid) -> dict[str, float]:
    """Word weights over the pyramid's references and its topic's peers (``word_weights``)."""
    texts = [r.text for r in pyramid.references.all()]
    texts += list(PeerSummary.objects.filter(topic_id=pyramid.topic_id).values_list("text", flat=True))
    return word_weights(texts)

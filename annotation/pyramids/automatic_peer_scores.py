"""Automatic pyramid scores of a study's peers, kept apart from the expert scores.

Each peer of a pyramid's topic gets the modified score of every suggestion from the pyramid alone
accepted (``automatic_scores``): automatic and UNVERIFIED. Nothing here is stored with the expert
scores (no ``AnnotationScore``, no ``PeerMatch``): the values live in the cache only, keyed by the
pyramid's and the topic's revisions and the ranking model's file stamp, so an edit of the pyramid, a
new peer text or a retrained model reads fresh values, and the expert listings
(``annotation.peers.results``) cannot include them. The correlation with the expert scores reuses
``scoring.metaeval`` (Pearson, Fisher-z interval) and ``scoring.intervals`` (bootstrap interval, as
the meta-evaluation page's other rows).

Blind: the suggestions read the pyramid, the peers' texts and the topic's word weights only
(``suggestion_inputs``), never an annotation (``peers.ranked_suggestions`` builds the same inputs for
the annotator, plus the annotator's own earlier matches).
"""

from __future__ import annotations

import hashlib
import json

from django.core.cache import cache

from annotation.corpus.models import PeerSummary
from annotation.jobs.queue import publish, release
from annotation.pyramids import suggestion_model
from annotation.pyramids.automatic_scores import accepted, automatic_score
from annotation.pyramids.models import Pyramid
from annotation.pyramids.scoring_inputs import load_pyramids
from annotation.pyramids.suggestion_inputs import pyramid_scus, topic_weights
from scoring.intervals import correlation_interval
from scoring.metaeval import Observation, meta_evaluate
from scoring.model import Convention
from scoring.scores import prepare

CACHE_SECONDS = 7 * 24 * 3600


def ranking() -> tuple[suggestion_model.Model | None, str]:
    """The ranking the automatic scores use, and how the page names it."""
    model = suggestion_model.load()
    if model is None:
        return None, "hand-set rules (no trained model file: run manage.py train_suggestions)"
    return model, f"the trained model ({model.trained_on}; threshold {model.threshold:.3f})"


def _model_stamp() -> str:
    try:
        return str(suggestion_model.model_path().stat().st_mtime_ns)
    except OSError:
        return "rules"


def _key(pyramid: Pyramid) -> str:
    return f"pyramid:automatic:{pyramid.pk}:{pyramid.revision}:{pyramid.topic.revision}:{_model_stamp()}"


def compute(pyramid: Pyramid) -> dict[str, dict[str, float | None]]:
    """Convention -> peer external id -> automatic modified score, for every peer text of the
    pyramid's topic; stored in the cache under the current revisions."""
    model, _ = ranking()
    scus, weights = pyramid_scus(pyramid), topic_weights(pyramid)
    uid_of = dict(pyramid.scus.values_list("pk", "uid"))
    scoring_pyramid = load_pyramids([pyramid.pk])[pyramid.pk]
    prepared = {c.value: prepare(scoring_pyramid, c) for c in Convention}
    found: dict[str, dict[str, float | None]] = {c: {} for c in prepared}
    for external_id, text in PeerSummary.objects.filter(topic_id=pyramid.topic_id).values_list("external_id", "text"):
        uids = [uid_of[pk] for pk in accepted(suggestion_model.PeerCase(text, scus, weights), model)]
        for convention, ready in prepared.items():
            found[convention][external_id] = automatic_score(ready, uids).modified
    cache.set(_key(pyramid), found, CACHE_SECONDS)
    return found


def compute_pyramids(pyramid_ids: list[int]) -> int:
    """The background job ``automatic``: compute what the cache lacks for these pyramids."""
    release("automatic", pyramid_ids)
    done = 0
    for pyramid in Pyramid.objects.filter(pk__in=pyramid_ids).select_related("topic"):
        if cache.get(_key(pyramid)) is None:
            compute(pyramid)
            done += 1
    return done


def stored(pyramid: Pyramid) -> dict[str, dict[str, float | None]] | None:
    """The pyramid's automatic scores under its current revisions, or None (not computed yet)."""
    return cache.get(_key(pyramid))


def dataset_correlation(dataset, expert_rows: list[dict], convention: Convention = Convention.NIST) -> dict:
    """The automatic scores' correlation with the expert modified scores, at system and summary level.

    ``expert_rows``: the dataset's expert score rows (``results.score_rows``, as the dashboard
    snapshot stores them; references are left out, as they have no automatic score); several
    annotators of a peer are averaged (``scoring.metaeval``). Pyramids whose automatic scores are not
    computed yet are published to the background job and counted in ``pending``: the page never
    computes them on the request."""
    convention = Convention(convention)
    _, ranked_by = ranking()
    pyramids = list(Pyramid.objects.filter(topic__dataset=dataset).select_related("topic").order_by("pk"))
    keys = {p.pk: _key(p) for p in pyramids}
    cached = cache.get_many(list(keys.values()))
    found = {pk: cached.get(key) for pk, key in keys.items()}
    missing = [pk for pk, value in found.items() if value is None]
    if missing:
        publish("automatic", missing)
        return {"ranking": ranked_by, "pending": len(missing), "pyramids": len(pyramids)}
    # The bootstrap intervals below are thousands of resamples: computed once per state (the
    # automatic scores' keys, the expert rows), not on every view of the page.
    state = json.dumps([sorted(keys.values()), convention.value, expert_rows], sort_keys=True, default=str)
    memo = f"pyramid:automatic:correlation:{hashlib.sha256(state.encode()).hexdigest()}"
    if (figures := cache.get(memo)) is not None:
        return figures
    system_of = {
        (peer.topic.external_id, peer.external_id): peer.system
        for peer in PeerSummary.objects.filter(topic__dataset=dataset).select_related("topic")
    }
    observations = [
        Observation(r["topic"], system_of.get((r["topic"], r["summary"]), r["summary"]), {"expert": r["modified"]})
        for r in expert_rows
        if r["kind"] == "peer"
    ]
    for p in pyramids:
        observations += [
            Observation(p.topic.external_id, system_of.get((p.topic.external_id, peer), peer), {"automatic": value})
            for peer, value in found[p.pk][convention.value].items()
        ]
    result = meta_evaluate(observations, "automatic", "expert", ("pearson",))
    system, summary = result.system["pearson"], result.summary["pearson"]
    levels = []
    for level, value, n, reason, fisher in (
        (
            "system",
            system.correlation.value,
            system.correlation.n,
            system.correlation.reason,
            (system.correlation.ci_low, system.correlation.ci_high),
        ),
        ("summary", summary.value, summary.topics, summary.reason, None),
    ):
        boot = correlation_interval(result.pairs.values, level, "pearson") if value is not None else None
        levels.append(
            {
                "level": level,
                "pearson": value,
                "n": n,
                "reason": reason,
                "fisher": fisher,
                "bootstrap": (boot.low, boot.high) if boot and boot.low is not None else None,
            }
        )
    figures = {
        "ranking": ranked_by,
        "pending": 0,
        "pyramids": len(pyramids),
        "paired": len(result.pairs.values),
        "without_expert": result.pairs.only_x,
        "levels": levels,
        "systems": [
            {"system": s, "automatic": system.x_means[s], "expert": system.y_means[s]}
            for s in sorted(system.x_means, key=lambda s: -system.y_means[s])
        ],
    }
    cache.set(memo, figures, CACHE_SECONDS)
    return figures

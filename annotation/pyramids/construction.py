"""Pyramid construction agreement of a topic, computed in the background and stored per topic.

Only the annotators' own pyramids are compared: a topic's adjudicated pyramid
(``adjudication/pyramids.py``) is left out, so agreement before adjudication stays as it was.

A topic may have several pyramids by different annotators (built blind to each other in the app,
or imported). The pyramids built from the same references (the same ``ReferenceSummary`` rows, so
every span already indexes the same text: no re-alignment of texts is needed, unlike files of
separate copies, ``agreement_inputs``) are compared two by two with
``scoring.pyramid_agreement.compare`` (definitions there and in docs/pyramid-agreement.md):
contributor alignment, pairwise and B-cubed clustering agreement, nominal alpha, SCU alignment and
weight agreement. The practical test compares the scores of the peers annotated against both
pyramids of a pair (annotations that count, ``peers.results.counted``; a peer annotated by several
annotators against one pyramid gets their mean), per convention: peer annotations are a layer above,
so ``peers.construction_scores`` registers how their scores are read.

Recomputation goes through the one background path: ``peers.recompute.schedule`` publishes the
job ``construction`` (``jobs.queue.JOBS``) for every topic a commit made stale, the sweeps publish
``stale_topics``; the task (``pyramids/tasks.py``) calls :func:`recompute_topics`. Results carry
the topic revision they were computed from and never overwrite a newer one; they also keep the
revisions of the pyramids, so that an edit of a peer annotation (which moves the topic revision
but no pyramid's) recomputes the practical test only and reuses the pairs' construction figures.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable

from django.db import IntegrityError, transaction
from django.db.models import Count, Q

from annotation.corpus.models import Topic
from annotation.jobs import queue
from annotation.pyramids.models import SCU, ContributorPart, Pyramid, PyramidAgreement
from scoring.model import Convention
from scoring.pyramid_agreement import (
    ALGORITHM,
    DEFAULT_THRESHOLD,
    PairAgreement,
    Span,
    SpanContributor,
    SpanPyramid,
    SpanSCU,
    compare,
    score_agreement,
)

THRESHOLD = DEFAULT_THRESHOLD


def _builder(pyramid: Pyramid) -> str:
    """Who built the pyramid, else where it came from."""
    return pyramid.creator.username if pyramid.creator_id else (pyramid.source or "unknown")


def pyramid_name(pyramid: Pyramid) -> str:
    """How pages and exports name a pyramid: its number and who built it (else where it came from)."""
    return f"#{pyramid.pk} {_builder(pyramid)}"


def stored_span_pyramids(
    pyramids: list[Pyramid],
) -> tuple[dict[int, SpanPyramid], dict[int, dict[tuple[int, int], int]]]:
    """pyramid id -> its SCUs with their labels and contributors' spans (named by the pyramid id), and
    pyramid id -> (SCU uid, contributor index) -> contributor id (the stored alignment names
    contributors by id). The order read in names contributors only: ``scoring.pyramid_agreement``
    orders them by content. One without a part has no span and is left out."""
    ids = [p.pk for p in pyramids]
    spans: dict[int, list[Span]] = defaultdict(list)
    for contributor_id, reference, start, end in (
        ContributorPart.objects.filter(contributor__scu__pyramid_id__in=ids)
        .order_by("contributor_id", "start", "id")
        .values_list("contributor_id", "reference__external_id", "start", "end")
    ):
        spans[contributor_id].append(Span(reference, start, end))
    contributors: dict[tuple[int, int], list[int]] = defaultdict(list)  # (pyramid, uid) -> contributor ids
    uids: dict[int, list[int]] = defaultdict(list)
    labels: dict[tuple[int, int], str] = {}
    for pyramid_id, uid, label, contributor_id in (
        Pyramid.objects.filter(pk__in=ids)
        .order_by("pk", "scus__uid", "scus__contributors__id")
        .values_list("pk", "scus__uid", "scus__label", "scus__contributors__id")
    ):
        if uid is None:
            continue
        if not uids[pyramid_id] or uids[pyramid_id][-1] != uid:
            uids[pyramid_id].append(uid)
            labels[(pyramid_id, uid)] = label
        if contributor_id is not None and spans.get(contributor_id):
            contributors[(pyramid_id, uid)].append(contributor_id)
    references = {p.pk: tuple(sorted(r.external_id for r in p.references.all())) for p in pyramids}
    out, keys = {}, {}
    for p in pyramids:
        scus = []
        keys[p.pk] = {}
        for uid in uids[p.pk]:
            members = contributors[(p.pk, uid)]
            keys[p.pk].update({(uid, i): pk for i, pk in enumerate(members)})
            scus.append(SpanSCU(uid, tuple(SpanContributor(tuple(spans[pk])) for pk in members), labels[(p.pk, uid)]))
        out[p.pk] = SpanPyramid(str(p.pk), references[p.pk], tuple(scus))
    return out, keys


# The practical test's scores: convention -> pyramid id -> peer id -> modified score of the peers
# annotated against the pyramids given. Peer annotations are a layer above: ``peers.construction_scores``
# registers how they are read (:func:`score_peers_with`) when the app is ready.
PeerScores = dict[str, dict[int, dict[int, float | None]]]
_peer_scores: list[Callable[[list[int]], PeerScores]] = []


def score_peers_with(scores: Callable[[list[int]], PeerScores]) -> None:
    """How the practical test reads the scores of the peers annotated against some pyramids (one:
    registering again replaces it)."""
    _peer_scores[:] = [scores]


def _scores(pyramid_ids: list[int]) -> PeerScores:
    if not _peer_scores:
        raise LookupError(
            "construction agreement has no peer scores registered for its practical test: "
            "annotation.peers.construction_scores registers them when the app is ready (annotation.apps)"
        )
    return _peer_scores[0](pyramid_ids)


def _figures(pair: PairAgreement) -> dict:
    c, s = pair.clustering, pair.scus
    return (
        {
            "scus_a": pair.scus_a,
            "scus_b": pair.scus_b,
            "contributors_a": pair.contributors_a,
            "contributors_b": pair.contributors_b,
            "aligned": len(pair.contributors.aligned),
            "unmatched_a": len(pair.contributors.unmatched_a),
            "unmatched_b": len(pair.contributors.unmatched_b),
            "mean_dice": pair.contributors.mean_dice,
            "exact": pair.contributors.exact,
            "pairs": c.pairs,
            "together_a": c.together_a,
            "together_b": c.together_b,
            "together_both": c.together_both,
            "pairwise_precision": c.pairwise_precision,
            "pairwise_recall": c.pairwise_recall,
            "pairwise_f1": c.pairwise_f1,
            "bcubed_precision": c.bcubed_precision,
            "bcubed_recall": c.bcubed_recall,
            "bcubed_f1": c.bcubed_f1,
            "alpha": c.alpha.value,
            "alpha_reason": c.alpha.reason,
            "reason": c.reason,
            "scus_matched": len(s.matched),
            "scus_identical": s.identical,
        }
        | _weight_figures("weight", pair.weights)
        | _weight_figures("contributor_weight", pair.contributor_weights)
    )


def _weight_figures(prefix: str, w) -> dict:
    """Weight agreement of matched SCUs (``weight_*``) or of aligned contributors (``contributor_weight_*``)."""
    return {
        f"{prefix}_n": w.n,
        f"{prefix}_equal_share": w.exact_share,
        f"{prefix}_mad": w.mean_abs_difference,
        f"{prefix}_pearson": w.pearson.value,
        f"{prefix}_spearman": w.spearman.value,
    }


def _construction(a: Pyramid, b: Pyramid, spans: dict, keys: dict, weights: dict) -> dict:
    """The construction figures of one pair (everything but the scores and the names)."""
    result = compare(spans[a.pk], spans[b.pk], THRESHOLD)
    return _figures(result) | {
        "scu_alignment": {
            "matched": [[m.a, m.b, m.shared, m.weight_a, m.weight_b] for m in result.scus.matched],
            "unmatched_a": [[uid, weights[a.pk][uid]] for uid in result.scus.unmatched_a],
            "unmatched_b": [[uid, weights[b.pk][uid]] for uid in result.scus.unmatched_b],
        },
        "aligned_contributors": [[keys[a.pk][x.a], keys[b.pk][x.b], x.dice] for x in result.contributors.aligned],
    }


def compute(topic: Topic, previous: PyramidAgreement | None = None) -> tuple[dict | None, dict[str, int]]:
    """The stored values of ``topic`` (None: fewer than two pyramids; no pair and the reason when
    no two of them are built from the same references) and the revisions of its pyramids, read
    before their data. The construction figures of ``previous`` (the stored row) are reused when
    no pyramid has changed since (an edit of a peer annotation changes only the practical test)."""
    # The annotators' own, not the adjudicated one; each pair's sides in the order of who built them
    # (ids only break ties): a dataset copied by its archive gets other ids, the same figures.
    pyramids = sorted(
        topic.pyramids.filter(pyramid_adjudication__isnull=True)
        .select_related("creator")
        .prefetch_related("references"),
        key=lambda p: (_builder(p), p.pk),
    )
    revisions = {str(p.pk): p.revision for p in pyramids}
    groups: dict[frozenset[int], list[Pyramid]] = defaultdict(list)
    for p in pyramids:
        groups[frozenset(r.pk for r in p.references.all())].append(p)
    compared = [p for references, group in groups.items() if len(group) >= 2 and references for p in group]
    if len(pyramids) < 2:
        return None, revisions
    if not compared:
        return {
            "threshold": THRESHOLD,
            "algorithm": ALGORITHM,
            "pairs": [],
            "pyramids": [],
            "left_out": [pyramid_name(p) for p in pyramids],
            "reason": "no two pyramids are built from the same references",
        }, revisions
    reusable = {}
    if previous is not None and previous.pyramid_revisions == revisions and _same_algorithm(previous.values):
        reusable = {(p["a"], p["b"]): p for p in previous.values["pairs"]}
    inputs = None
    scores = _scores([p.pk for p in compared])
    pairs = []
    for group in groups.values():
        if group[0] not in compared:
            continue
        for a, b in itertools.combinations(group, 2):
            figures = {
                k: v
                for k, v in reusable.get((a.pk, b.pk), {}).items()
                if k not in ("a", "b", "a_name", "b_name", "scores")
            }
            if not figures:
                if inputs is None:  # read the pyramids once, only when a pair needs them
                    spans, keys = stored_span_pyramids(compared)
                    inputs = (
                        spans,
                        keys,
                        {pk: {scu.uid: len(scu.contributors) for scu in p.scus} for pk, p in spans.items()},
                    )
                figures = _construction(a, b, *inputs)
            practical = {}
            for convention, per_pyramid in scores.items():
                sa = score_agreement(per_pyramid.get(a.pk, {}), per_pyramid.get(b.pk, {}))
                practical[convention] = {
                    "n": sa.n,
                    "pearson": sa.pearson.value,
                    "ci_low": sa.pearson.ci_low,
                    "ci_high": sa.pearson.ci_high,
                    "pearson_reason": sa.pearson.reason,
                    "ci_reason": sa.pearson.ci_reason,
                    "mad": sa.mean_abs_difference,
                    "above_noise": sa.above_noise,
                    "share_above_noise": sa.share_above_noise,
                    "noise": sa.noise,
                }
            pairs.append(
                {"a": a.pk, "b": b.pk, "a_name": pyramid_name(a), "b_name": pyramid_name(b)}
                | figures
                | {"scores": practical}
            )
    left_out = [pyramid_name(p) for p in pyramids if p not in compared]
    return {
        "threshold": THRESHOLD,
        "algorithm": ALGORITHM,
        "pairs": pairs,
        "pyramids": [{"id": p.pk, "name": pyramid_name(p), "status": p.status} for p in compared],
        "left_out": left_out,
        "reason": None,
    }, revisions


def _same_algorithm(values: dict) -> bool:
    """Whether stored values were computed as they are now (same threshold, same algorithm): rows
    of an older algorithm (ties broken by uid) are stale whatever their revision."""
    return values.get("threshold") == THRESHOLD and values.get("algorithm") == ALGORITHM


def _store(topic: Topic, revision: int, values: dict, revisions: dict) -> int:
    """Write unless a result of a newer revision is stored; 1 if written."""
    updated = PyramidAgreement.objects.filter(topic=topic, topic_revision__lte=revision).update(
        values=values, topic_revision=revision, pyramid_revisions=revisions
    )
    if updated or PyramidAgreement.objects.filter(topic=topic).exists():
        return updated
    try:
        with transaction.atomic():
            PyramidAgreement.objects.create(
                topic=topic, topic_revision=revision, pyramid_revisions=revisions, values=values
            )
    except IntegrityError:  # another worker stored it (or the topic was deleted) meanwhile
        return 0
    return 1


_OWN_PYRAMIDS = Count(
    "pyramids", filter=Q(pyramids__pyramid_adjudication__isnull=True)
)  # the annotators' own (compared)


def recompute_topics(topic_ids: Iterable[int]) -> int:
    """Compute and store the construction agreement of these topics (those not current:
    ``stale_among``); a topic with fewer than two comparable pyramids keeps no row (those computed
    less than ``AGREEMENT_SPACING_SECONDS`` ago are put off: ``queue.start``). Returns how many rows
    were written."""
    return recompute_due(queue.start("construction", topic_ids, stale_among))


def recompute_due(ids: Iterable[int]) -> int:
    """``recompute_topics`` once the job's first step has chosen ``ids`` (a topic's agreement job,
    ``peers.recompute.recompute_topics``, computes both figures of a topic in one task); a topic
    whose row is current is skipped."""
    ids = list(ids)
    if not ids:
        return 0
    stored = {a.topic_id: a for a in PyramidAgreement.objects.filter(topic_id__in=ids)}
    written = 0
    for topic in Topic.objects.filter(pk__in=ids).order_by("pk"):  # the revision is read before the data
        previous = stored.get(topic.pk)
        if previous is not None and previous.topic_revision == topic.revision and _same_algorithm(previous.values):
            continue
        values, revisions = compute(topic, previous)
        if values is None:
            PyramidAgreement.objects.filter(topic=topic, topic_revision__lte=topic.revision).delete()
            continue
        written += _store(topic, topic.revision, values, revisions)
    return written


def _stale(topics, rows) -> list[int]:
    """Of ``topics``: those with two pyramids or more whose row in ``rows`` lags behind their
    revision, is missing or was computed by another algorithm or threshold, and those with a row
    but fewer pyramids now (their row goes). One query each, however many topics (a builder's edit
    of a topic's only pyramid publishes this job after every save, and finds nothing to do)."""
    several = dict(topics.annotate(n=_OWN_PYRAMIDS).filter(n__gte=2).values_list("id", "revision"))
    rows = list(rows.values_list("topic_id", "topic_revision", "values__threshold", "values__algorithm"))
    agreed = {
        pk: revision
        for pk, revision, threshold, algorithm in rows
        if _same_algorithm({"threshold": threshold, "algorithm": algorithm})
    }
    return sorted(
        {pk for pk, revision in several.items() if agreed.get(pk) != revision}
        | ({pk for pk, *_ in rows} - set(several))
    )


def stale_among(topic_ids: Iterable[int]) -> list[int]:
    """Those of these topics whose figures are not current (``_stale``): the job's first step."""
    ids = list(topic_ids)
    return _stale(Topic.objects.filter(pk__in=ids), PyramidAgreement.objects.filter(topic_id__in=ids))


def stale_topics() -> list[int]:
    """Every topic whose figures are not current (``_stale``): the sweep's."""
    return _stale(Topic.objects.all(), PyramidAgreement.objects.all())


# --- what pages and exports list ------------------------------------------------------------------

PAIR_KEYS = (
    "dataset",
    "topic",
    "pyramid_a",
    "pyramid_b",
    "name_a",
    "name_b",
    "threshold",
    "scus_a",
    "scus_b",
    "contributors_a",
    "contributors_b",
    "aligned",
    "unmatched_a",
    "unmatched_b",
    "mean_dice",
    "exact",
    "pairs",
    "together_a",
    "together_b",
    "together_both",
    "pairwise_precision",
    "pairwise_recall",
    "pairwise_f1",
    "bcubed_precision",
    "bcubed_recall",
    "bcubed_f1",
    "alpha",
    "alpha_reason",
    "scus_matched",
    "scus_identical",
    "weight_n",
    "weight_equal_share",
    "weight_mad",
    "weight_pearson",
    "weight_spearman",
    "contributor_weight_n",
    "contributor_weight_equal_share",
    "contributor_weight_mad",
    "contributor_weight_pearson",
    "contributor_weight_spearman",
    "score_peers",
    "score_pearson",
    "score_ci_low",
    "score_ci_high",
    "score_pearson_reason",
    "score_mad",
    "score_above_noise",
    "noise",
    "current",
    "computed_at",
)
SCU_KEYS = (
    "dataset",
    "topic",
    "pyramid_a",
    "pyramid_b",
    "kind",
    "uid_a",
    "label_a",
    "weight_a",
    "uid_b",
    "label_b",
    "weight_b",
    "shared",
    "weight_difference",
    "current",
)
SCU_KINDS = ("identical", "matched", "only_a", "only_b")  # drill-down order: what differs after what agrees


def stored(topics) -> list[PyramidAgreement]:
    """The stored construction agreement of these topics (a queryset), in topic order."""
    return list(
        PyramidAgreement.objects.filter(topic__in=topics)
        .select_related("topic__dataset")
        .order_by("topic__external_id")
    )


def pair_rows(agreements: Iterable[PyramidAgreement], convention: Convention) -> list[dict]:
    """One row per compared pair of pyramids of each topic; the practical test in ``convention``."""
    rows = []
    for agreement in agreements:
        current = agreement.is_current
        for pair in agreement.values["pairs"]:
            figures = {key: pair[key] for key in PAIR_KEYS if key in pair}
            scores = pair["scores"][convention.value]
            rows.append(
                figures
                | {
                    "dataset": agreement.topic.dataset.name,
                    "topic": agreement.topic.external_id,
                    "pyramid_a": pair["a"],
                    "pyramid_b": pair["b"],
                    "name_a": pair["a_name"],
                    "name_b": pair["b_name"],
                    "threshold": agreement.values["threshold"],
                    "score_peers": scores["n"],
                    "score_pearson": scores["pearson"],
                    "score_ci_low": scores["ci_low"],
                    "score_ci_high": scores["ci_high"],
                    "score_pearson_reason": scores["pearson_reason"] or scores["ci_reason"],
                    "score_mad": scores["mad"],
                    "score_above_noise": scores["above_noise"],
                    "noise": scores["noise"],
                    "current": current,
                    "computed_at": agreement.computed_at.isoformat(),
                }
            )
    return rows


def dataset_section(dataset, convention: Convention) -> dict:
    """The agreement page's section: one row per compared pair, and the topics with two or more
    pyramids and no stored figures yet (being computed)."""
    agreements = stored(dataset.topics.all())
    rows = pair_rows(agreements, convention)
    several = dataset.topics.annotate(n=Count("pyramids")).filter(n__gte=2).values_list("external_id", flat=True)
    return {
        "rows": rows,
        "pending": sorted(set(several) - {a.topic.external_id for a in agreements}),
        "not_compared": [
            {"topic": a.topic.external_id, "reason": a.values["reason"], "pyramids": a.values["left_out"]}
            for a in agreements
            if not a.values["pairs"]
        ],
        "updating": any(not a.is_current for a in agreements),
    }


def find_pair(agreement: PyramidAgreement, a: int, b: int) -> dict | None:
    return next((p for p in agreement.values["pairs"] if (p["a"], p["b"]) == (a, b)), None)


def scu_rows(agreement: PyramidAgreement, pair: dict) -> list[dict]:
    """The SCU alignment of one pair, SCU by SCU (labels as they are now): identical matches,
    other matches (contributors or weights differ), then the SCUs of either side left unmatched."""
    labels = {
        (pyramid_id, uid): label
        for pyramid_id, uid, label in SCU.objects.filter(pyramid_id__in=(pair["a"], pair["b"])).values_list(
            "pyramid_id", "uid", "label"
        )
    }
    base = {
        "dataset": agreement.topic.dataset.name,
        "topic": agreement.topic.external_id,
        "pyramid_a": pair["a"],
        "pyramid_b": pair["b"],
        "current": agreement.is_current,
    }

    def side(name, pyramid_id, uid, weight):
        return {f"uid_{name}": uid, f"label_{name}": labels.get((pyramid_id, uid), ""), f"weight_{name}": weight}

    rows = []
    alignment = pair["scu_alignment"]
    for uid_a, uid_b, shared, weight_a, weight_b in alignment["matched"]:
        identical = shared == weight_a == weight_b
        rows.append(
            base
            | {"kind": "identical" if identical else "matched"}
            | side("a", pair["a"], uid_a, weight_a)
            | side("b", pair["b"], uid_b, weight_b)
            | {"shared": shared, "weight_difference": weight_b - weight_a}
        )
    empty = {"uid": None, "label": "", "weight": None}
    for name, other in (("a", "b"), ("b", "a")):
        for uid, weight in alignment[f"unmatched_{name}"]:
            rows.append(
                base
                | {"kind": f"only_{name}"}
                | side(name, pair[name], uid, weight)
                | {f"{k}_{other}": v for k, v in empty.items()}
                | {"shared": 0, "weight_difference": None}
            )
    return sorted(rows, key=lambda r: (SCU_KINDS.index(r["kind"]), r["uid_a"] or 0, r["uid_b"] or 0))


TABLES = ("pairs", "scus")


def table_rows(
    agreements: list[PyramidAgreement], table: str, convention: Convention
) -> tuple[list[dict], tuple[str, ...]]:
    """The rows and columns of a download: ``pairs`` (figures per pair) or ``scus`` (every pair's
    SCU alignment, SCU by SCU)."""
    if table == "pairs":
        return pair_rows(agreements, convention), PAIR_KEYS
    if table == "scus":
        return [row for a in agreements for pair in a.values["pairs"] for row in scu_rows(a, pair)], SCU_KEYS
    raise ValueError(f"unknown table {table!r}")

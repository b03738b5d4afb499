"""Score and agreement rows: the one implementation behind exports, stored results and dashboards.

Row keys are a public contract (``export_scores``/``export_agreement``, the API's CSV/JSON): keep them.
"""

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from django.db.models import Exists, OuterRef, Q, QuerySet

from annotation.corpus.models import Topic
from annotation.peers.models import AnnotationScore, PeerAnnotation, PeerMatch
from annotation.peers.scoring_inputs import load_annotations
from annotation.pyramids.models import SCU, Pyramid
from annotation.pyramids.scoring_inputs import load_pyramids
from scoring.agreement import alpha_dice_summary, peer_matrix
from scoring.correlation import mean_abs_difference, pearson
from scoring.model import Convention
from scoring.scores import prepare, reference_annotation, score_prepared, score_reference

SCORE_KEYS = (
    "dataset",
    "topic",
    "summary",
    "kind",
    "annotator",
    "version",
    "modified",
    "modified_jk",
    "original",
    "matched_scus",
    "repetitions",
    "non_matching",
    "observed_weight",
    "convention",
)
AGREEMENT_KEYS = (
    "dataset",
    "topic",
    "annotators",
    "peers",
    "alpha_dice_mean",
    "alpha_dice_pooled",
    "alpha_dice_by_peer",
    "pearson_modified",
    "pearson_ci",
    "mean_abs_diff_modified",
    "units_pooled",
    "convention",
)


@dataclass(frozen=True)
class Adjudicated:
    """The adjudication's part of the rule of what counts, each an ``Exists`` on ``OuterRef`` paths.

    Adjudication is a layer above peers: ``annotation/adjudication/counting.py`` registers its part
    (:func:`register_adjudicated`) when the app is ready, so the rule reads adjudicated versions
    without importing their models."""

    annotation: Callable[[str], Exists]  # the peer annotation at the path is an adjudicated version
    settles: Callable[[str, str], Exists]  # an adjudicated version settles the (peer, pyramid) at the paths
    topic: Callable[[str], Exists]  # the topic at the path has an adjudicated pyramid
    pyramid: Callable[[str], Exists]  # the pyramid at the path is its topic's adjudicated pyramid


_adjudicated: list[Adjudicated] = []


def register_adjudicated(part: Adjudicated) -> None:
    """The adjudication's part of the rule (one: registering again replaces it)."""
    _adjudicated[:] = [part]


def _adjudication() -> Adjudicated:
    if not _adjudicated:
        raise LookupError(
            "the rule of what counts has no adjudication part registered: "
            "annotation.adjudication.counting registers it when the app is ready (annotation.apps)"
        )
    return _adjudicated[0]


def counted(annotations: QuerySet, *, include_unfinished: bool = False, for_scores: bool = False) -> QuerySet:
    """The peer annotations that scores and agreement rest on: the one rule every consumer uses
    (exports, the API's scores/agreement, stored topic agreement, dashboards, progress
    (``progress_counting``), the builder's score panel; ``counting`` is the same rule as a condition, for aggregates).

    By default only finished annotations (status ``done``) count: opening a peer creates an empty
    in-progress annotation, and half-done work would pull scores and agreement down. On request
    unfinished ones with at least one match are included as well (their rows say ``status``). An
    annotation nobody worked on (unfinished and without a single match) never counts: it would be
    scored 0, as if the annotator had found nothing in the peer.

    Adjudication (``annotation/adjudication``): agreement and progress (the default) count the
    annotators' versions only, never an adjudicated version. Scores (``for_scores``) count the
    adjudicated version of a peer and pyramid where there is one, instead of the annotators'
    versions it settles; elsewhere the annotators' versions as before. Where a topic has an
    adjudicated pyramid (``PyramidAdjudication``), scores rest on it: only the annotations made
    against it count for scores (those against the annotators' pyramids still count for
    agreement and for construction agreement's practical test).
    """
    return annotations.filter(counting(include_unfinished=include_unfinished, for_scores=for_scores))


def counting(*, include_unfinished: bool = False, for_scores: bool = False) -> Q:
    """The condition of ``counted`` on a peer annotation (e.g. ``Count(..., filter=counting())``)."""
    done = Q(status=PeerAnnotation.Status.DONE)
    if include_unfinished:
        done |= Q(Exists(PeerMatch.objects.filter(annotation=OuterRef("pk"))))
    adjudication = _adjudication()
    adjudicated = Q(adjudication.annotation("pk"))
    if not for_scores:
        return done & ~adjudicated
    settled = Q(adjudication.settles("peer", "pyramid"))
    return (adjudicated | (done & ~settled)) & scoring_pyramid()


def progress_counting() -> Q:
    """The condition of a peer annotation of making its peer *done* in every progress figure (the
    overview, the annotator's home and page, the API's ``progress``): counted as the scores count
    it. Finished, an annotator's own version (``counting``), and made against the pyramid its
    topic's scores rest on (``scoring_pyramid``): an annotation made against an annotator's pyramid
    before the topic's pyramid was adjudicated is no longer scored, so its peer is not done (it is
    to be annotated again: ``adjudication.reannotation``). A peer whose annotators' versions are
    settled by an adjudicated version is done (that version is scored)."""
    return counting() & scoring_pyramid()


def peers_done(annotations: QuerySet) -> QuerySet:
    """The ids of the peers ``annotations`` make done (``progress_counting``), each once."""
    return annotations.filter(progress_counting()).order_by().values_list("peer_id", flat=True).distinct()


def scoring_pyramid(path: str = "pyramid") -> Q:
    """The condition on a pyramid (reached by ``path``) of being the one its topic's scores rest on:
    the topic's adjudicated pyramid where there is one, else any of its pyramids."""
    prefix = f"{path}__" if path else ""
    return Q(**{f"{prefix}pyramid_adjudication__isnull": False}) | ~Q(_adjudication().topic(f"{prefix}topic"))


PYRAMID_ADJUDICATED = "pyramid: adjudicated"


def rests_on_adjudication(version: str) -> bool:
    """Does a score row's ``version`` name an adjudicated annotation or an adjudicated pyramid?"""
    return any(part in ("adjudicated", PYRAMID_ADJUDICATED) for part in version.split("; "))


def version_of(annotation: PeerAnnotation) -> str:
    """Which version a score rests on, as every table and export states it: ``adjudicated`` or the
    annotator's user name, followed by ``; pyramid: adjudicated`` when the annotation is made
    against the topic's adjudicated pyramid (``adjudicated`` and ``pyramid_adjudicated`` must be
    annotated on the queryset: ``with_version``)."""
    annotation_version = (
        "adjudicated" if annotation.adjudicated else (annotation.annotator.username if annotation.annotator_id else "")
    )
    return _joined(annotation_version, annotation.pyramid_adjudicated)


def _joined(annotation_version: str, pyramid_adjudicated: bool) -> str:
    return "; ".join(v for v in (annotation_version, PYRAMID_ADJUDICATED if pyramid_adjudicated else "") if v)


def is_adjudicated_pyramid(pyramid: str = "pk") -> Exists:
    """Is the pyramid ``pyramid`` refers to (an ``OuterRef`` path) its topic's adjudicated pyramid?
    The one expression of it for the tables here and the dashboards' figures."""
    return _adjudication().pyramid(pyramid)


def with_version(annotations: QuerySet) -> QuerySet:
    """``annotations`` with ``adjudicated`` and ``pyramid_adjudicated`` (bools) for ``version_of``."""
    return annotations.annotate(
        adjudicated=_adjudication().annotation("pk"),
        pyramid_adjudicated=is_adjudicated_pyramid("pyramid"),
    )


def not_counted(annotations: QuerySet) -> dict[str, int]:
    """What ``counted`` leaves out by default, for pages to show apart: unfinished annotations with
    matches (``in_progress``, countable on request) and opened but empty ones (``empty``, never)."""
    unfinished = annotations.exclude(status=PeerAnnotation.Status.DONE)
    in_progress = unfinished.filter(Exists(PeerMatch.objects.filter(annotation=OuterRef("pk")))).count()
    return {"in_progress": in_progress, "empty": unfinished.count() - in_progress}


def _score_row(values: dict, *, dataset, topic, summary, kind, annotator, status, version=None) -> dict:
    """``version``: what the score rests on (``version_of``; a reference's, its pyramid's creator)."""
    row = {
        "dataset": dataset,
        "topic": topic,
        "summary": summary,
        "kind": kind,
        "annotator": annotator,
        "version": annotator if version is None else version,
    }
    row.update({key: values[key] for key in SCORE_KEYS if key in values})
    row["undefined"] = values["undefined"]
    row["status"] = status
    return row


def score_keys(include_unfinished: bool = False) -> tuple[str, ...]:
    """CSV columns of the score rows: with unfinished annotations included, their ``status`` too."""
    return SCORE_KEYS + ("status",) if include_unfinished else SCORE_KEYS


def score_annotations(annotations: Iterable[PeerAnnotation], convention: Convention) -> dict[int, "object"]:
    """annotation id -> PeerScore, loading every pyramid and annotation in a fixed number of queries
    and preparing each pyramid's weights (and jackknife pyramids) once."""
    annotations = list(annotations)
    pyramids = load_pyramids(a.pyramid_id for a in annotations)
    inputs = load_annotations(a.pk for a in annotations)
    prepared = {pk: prepare(pyramid, convention) for pk, pyramid in pyramids.items()}  # once per pyramid, not per peer
    return {a.pk: score_prepared(prepared[a.pyramid_id], inputs[a.pk]) for a in annotations}


def current_scores(revisions: dict[int, tuple[int, int]], topics, convention: Convention) -> dict[int, dict]:
    """annotation id -> its stored score values (``AnnotationScore``) in ``convention``, for those
    stored from the revisions given (annotation id -> (pyramid revision, annotation revision),
    read with the annotations).

    The background recomputation stores every score after each change, so an export or a dashboard
    reads them instead of scoring every annotation again; what is stale or missing is left out
    (the caller computes it)."""
    stored = AnnotationScore.objects.filter(
        convention=convention.value, annotation__pyramid__topic__in=topics
    ).values_list("annotation_id", "pyramid_revision", "annotation_revision", "values")
    return {pk: values for pk, p_rev, a_rev, values in stored if revisions.get(pk) == (p_rev, a_rev)}


def score_rows(
    topics,
    convention: Convention = Convention.NIST,
    *,
    include_references: bool = True,
    include_unfinished: bool = False,
) -> list[dict]:
    """One row per peer annotation counted for scores (``counted(for_scores=True)``: the adjudicated
    version where there is one) and (optionally) per reference summary of each pyramid. ``version``
    says which version each row rests on (``version_of``).

    A reference is scored against the pyramid of the other references, its annotation being the
    SCUs it contributes to; its annotator is the pyramid's creator. Where a topic has an adjudicated
    pyramid, its references are scored against that pyramid only (``scoring_pyramid``; version
    ``pyramid: adjudicated``). Every row carries ``status`` (a reference's is ``done``).
    """
    convention = Convention(convention)
    annotations = list(
        with_version(
            counted(
                PeerAnnotation.objects.filter(pyramid__topic__in=topics),
                include_unfinished=include_unfinished,
                for_scores=True,
            )
        )
        .select_related("peer__topic__dataset", "annotator", "pyramid")
        .order_by(
            "peer__topic__dataset__name", "peer__topic__external_id", "peer__external_id", "annotator__username", "id"
        )
    )
    scores = current_scores({a.pk: (a.pyramid.revision, a.revision) for a in annotations}, topics, convention)
    missing = score_annotations([a for a in annotations if a.pk not in scores], convention)
    scores.update((pk, score.as_dict()) for pk, score in missing.items())
    rows = [
        _score_row(
            scores[a.pk],
            dataset=a.peer.topic.dataset.name,
            topic=a.peer.topic.external_id,
            summary=a.peer.external_id,
            kind="peer",
            annotator=a.annotator.username if a.annotator_id else "",
            status=a.status,
            version=version_of(a),
        )
        for a in annotations
    ]
    if include_references:
        pyramids = list(
            Pyramid.objects.filter(scoring_pyramid(""), topic__in=topics)
            .select_related("topic__dataset", "creator")
            .annotate(adjudicated=is_adjudicated_pyramid())
            .order_by("topic__external_id", "id")
        )
        inputs = load_pyramids(p.pk for p in pyramids)
        for p in pyramids:
            for ref in inputs[p.pk].references:
                annotation = reference_annotation(inputs[p.pk], ref, convention)
                rows.append(
                    _score_row(
                        score_reference(inputs[p.pk], ref, annotation, convention).as_dict(),
                        dataset=p.topic.dataset.name,
                        topic=p.topic.external_id,
                        summary=ref,
                        kind="reference",
                        annotator=p.creator.username if p.creator_id else "",
                        status=PeerAnnotation.Status.DONE.value,
                        version=_joined(p.creator.username if p.creator_id else "", p.adjudicated),
                    )
                )
    return rows


class Annotated(NamedTuple):
    """What agreement needs of one counted annotation (read as values: no model instances, no texts)."""

    pk: int
    pyramid_id: int
    topic_id: int
    peer: str
    annotator_id: int
    annotator: str
    revisions: tuple[int, int]  # (pyramid, annotation): which stored scores are current
    topic: str
    dataset: str


def agreement_rows(topics, convention: Convention = Convention.NIST, *, include_unfinished: bool = False) -> list[dict]:
    """Agreement per topic over the peers that two or more annotators annotated with one pyramid
    (counted annotations only: ``counted``)."""
    convention = Convention(convention)
    return agreement_rows_by_convention(topics, (convention,), include_unfinished=include_unfinished)[convention]


def agreement_rows_by_convention(
    topics, conventions: Iterable[Convention], *, include_unfinished: bool = False
) -> dict[Convention, list[dict]]:
    """``agreement_rows`` for several conventions, reading the annotations and their matches once.
    The annotators' modified scores are the stored ones where current (``current_scores``), else computed."""
    conventions = [Convention(c) for c in conventions]
    shared = shared_groups(topics, include_unfinished=include_unfinished)
    if not shared:
        return {convention: [] for convention in conventions}
    involved = [a for group in shared.values() for a in group]
    uids = defaultdict(list)  # pyramid id -> its SCU uids, in order
    for pyramid_id, uid in (
        SCU.objects.filter(pyramid_id__in={a.pyramid_id for a in involved})
        .order_by("uid")
        .values_list("pyramid_id", "uid")
    ):
        uids[pyramid_id].append(uid)
    inputs = load_annotations(a.pk for a in involved)
    revisions = {a.pk: a.revisions for a in involved}
    return {
        convention: _agreement_rows(
            shared, uids, inputs, _modified_scores(involved, revisions, topics, convention), convention
        )
        for convention in conventions
    }


def shared_groups(topics, *, include_unfinished: bool = False) -> dict[tuple[int, int, str], list[Annotated]]:
    """(topic id, pyramid id, peer external id) -> the counted annotations of that peer with that
    pyramid, for the peers two or more annotators annotated: what agreement is computed over."""
    by_peer = defaultdict(list)
    for pk, pyramid_id, topic_id, peer, annotator_id, annotator, p_rev, a_rev, topic, dataset in (
        counted(
            PeerAnnotation.objects.filter(pyramid__topic__in=topics, annotator__isnull=False),
            include_unfinished=include_unfinished,
        )
        .order_by()
        .values_list(
            "id",
            "pyramid_id",
            "pyramid__topic_id",
            "peer__external_id",
            "annotator_id",
            "annotator__username",
            "pyramid__revision",
            "revision",
            "pyramid__topic__external_id",
            "pyramid__topic__dataset__name",
        )
    ):
        by_peer[(topic_id, pyramid_id, peer)].append(
            Annotated(pk, pyramid_id, topic_id, peer, annotator_id, annotator, (p_rev, a_rev), topic, dataset)
        )
    return {key: group for key, group in by_peer.items() if len({a.annotator_id for a in group}) >= 2}


def _modified_scores(
    annotations: list[Annotated], revisions: dict[int, tuple[int, int]], topics, convention: Convention
) -> dict[int, float | None]:
    modified = {pk: values["modified"] for pk, values in current_scores(revisions, topics, convention).items()}
    missing = score_annotations([a for a in annotations if a.pk not in modified], convention)
    return modified | {pk: score.modified for pk, score in missing.items()}


def _agreement_rows(
    shared: dict[tuple, list[Annotated]],
    uids: dict[int, list[int]],
    inputs: dict,
    modified_of: dict[int, float | None],
    convention: Convention,
) -> list[dict]:
    rows = []
    topic_names = {key[0]: group[0].topic for key, group in shared.items()}
    for topic_id in sorted(topic_names, key=topic_names.get):
        keys = sorted(key for key in shared if key[0] == topic_id)
        several_pyramids = len({key[1] for key in keys}) > 1
        per_peer, modified = {}, defaultdict(dict)  # modified[annotator][peer] = score
        for _, pyramid_id, peer in keys:
            label = f"{peer} (pyramid {pyramid_id})" if several_pyramids else peer
            group = shared[(topic_id, pyramid_id, peer)]
            per_peer[label] = peer_matrix(uids[pyramid_id], {a.annotator: dict(inputs[a.pk].matches) for a in group})
            for a in group:
                modified[a.annotator][label] = modified_of[a.pk]
        summary = alpha_dice_summary(per_peer)
        first = shared[keys[0]][0]
        rows.append(
            {
                "dataset": first.dataset,
                "topic": first.topic,
                "annotators": sorted(modified),
                "peers": len(per_peer),
                "alpha_dice_mean": summary.mean,
                "alpha_dice_pooled": summary.pooled.value,
                "alpha_dice_by_peer": {
                    peer: {"value": alpha.value, "units": alpha.units, "reason": alpha.reason}
                    for peer, alpha in summary.by_peer.items()
                },
                **_score_comparison(modified),
                "units_pooled": summary.pooled.units,
                "convention": convention.value,
            }
        )
    return rows


def _score_comparison(modified: dict[str, dict[str, float | None]]) -> dict:
    """Pearson r (95% Fisher-z interval) and mean absolute difference of two annotators' modified scores.

    With more than two annotators, the pair that shares the most peers (then by name) is compared.
    """
    names = sorted(modified)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    a, b = min(pairs, key=lambda pair: (-len(modified[pair[0]].keys() & modified[pair[1]].keys()), pair))
    common = sorted(
        p for p in set(modified[a]) & set(modified[b]) if modified[a][p] is not None and modified[b][p] is not None
    )
    x, y = [modified[a][p] for p in common], [modified[b][p] for p in common]
    r = pearson(x, y) if common else None
    return {
        "pearson_modified": r.value if r else None,
        "pearson_ci": [r.ci_low, r.ci_high] if r and r.ci_low is not None else None,
        "mean_abs_diff_modified": mean_abs_difference(x, y) if common else None,
        "compared_annotators": [a, b],
    }


def write_rows(stream, rows: list[dict], keys: tuple[str, ...], fmt: str) -> None:
    """Write rows as JSON (every key) or CSV (the columns ``keys``; nested values as JSON; formula
    cells neutralised, see ``formats.csv_cells``)."""
    if fmt == "json":
        stream.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    from annotation.formats import csv_cells  # the formats package reads XML too: not imported by JSON exports

    writer = csv_cells.DictWriter(stream, fieldnames=list(keys), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: json.dumps(v) if isinstance(v, (dict, list)) else ("" if v is None else v) for k, v in row.items()}
        )


def topics_of(dataset_name: str | None):
    topics = Topic.objects.all()
    return topics.filter(dataset__name=dataset_name) if dataset_name else topics

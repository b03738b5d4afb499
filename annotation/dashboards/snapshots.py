"""Stored dashboard snapshots: every figure of a dataset's coordinator pages, computed in the
background and read by the pages (``frontend/dashboards``), so the pages stay fast on real data.

- ``fingerprint(dataset)`` describes the live state the figures depend on: per topic its revision
  (bumped by every score-affecting change, ``annotation/peers/score_events.py``), its annotations (how
  many, which, how many finished: finishing one bumps no revision but adds its score row, see
  ``results.counted``) and pyramids (creating a pyramid bumps no revision but adds score rows), the
  pyramids' references; the peers' system ids; a digest of the imported judgments; the number of
  bootstrap resamples of the correlations' intervals (``METAEVAL_RESAMPLES``, a setting). A snapshot is
  *current* while its fingerprint equals the live one. (Stored ``AnnotationScore``/``TopicAgreement``
  rows are not read: the figures are computed from the data itself with the same services as the
  exports, so their revisions would add nothing.)
- ``recompute_dataset`` reads the fingerprint (and the moment, ``state_at``) BEFORE the data, so the
  data is never older than the state it is stored under, then writes only if the stored snapshot was
  read from an older state: a slow task never overwrites a newer snapshot.
- Score rows of topics whose fingerprint did not change are reused from the previous snapshot, so a
  change in one topic rescores one topic (the rows are the ``export_scores`` rows, in their order).
- The background job (``recompute_datasets``) computes only datasets whose snapshot is not current
  (``stale_among``): however often its message is delivered, one full run per change.
- ``schedule(dataset_ids)`` hands the datasets to the background runner (``jobs.queue.publish``),
  which runs or publishes ``annotation.recompute_dashboards`` once per burst; ``recompute_topics``
  publishes the dashboards of its topics' datasets when it is done.

Payload (JSON): ``conventions[nist|sacrerouge]`` -> ``per_topic`` (export rows, references
included), ``per_system`` (``dashboards.system_rows``), ``tiers`` (``dashboards.tier_histograms``),
``agreement`` (``results.agreement_rows``, the ``export_agreement`` rows), ``agreement_details``
(per topic: per-peer alpha and both annotators' scores, reasons, the units behind each figure) and
``metaeval[modified|modified_jk]`` (``dashboards.metaeval_table`` rows), ``metaeval_intervals``
(bootstrap intervals of the correlations shown by default) and ``statistics`` (intervals of system
means, pairwise tests, groups, SCU-level tests, stability curves, power: ``system_statistics``); ``pairs`` (alpha_Dice
pooled per annotator pair, the same under both conventions); ``judgments`` (metric -> count).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.corpus.models import Dataset, PeerSummary, Topic
from annotation.dashboards import figures, queries
from annotation.dashboards.models import DatasetDashboard, Judgment
from annotation.jobs import queue
from annotation.peers.results import agreement_rows_by_convention, score_annotations, score_rows, shared_groups
from annotation.peers.scoring_inputs import load_annotations
from annotation.pyramids.scoring_inputs import load_pyramids
from scoring.agreement import alpha_dice, alpha_dice_summary, peer_matrix
from scoring.correlation import above_noise, pearson
from scoring.metaeval import meta_evaluate
from scoring.model import Convention

log = logging.getLogger(__name__)

VERSION = 3  # bump when the payload's shape changes: old snapshots are then stale
METAEVAL_SCORES = ("modified", "modified_jk")


# --- the state ------------------------------------------------------------------------------


def _judgment_digest(dataset: Dataset) -> dict:
    rows = (
        Judgment.objects.filter(topic__dataset=dataset)
        .order_by("id")
        .values_list("id", "topic_id", "summary", "metric", "value")
    )
    digest = hashlib.sha256()
    n = 0
    for row in rows.iterator(chunk_size=2000):
        digest.update(repr(row).encode())
        n += 1
    return {"n": n, "sha256": digest.hexdigest()}


def fingerprint(dataset: Dataset) -> dict:
    """The live state the dashboard's figures depend on (JSON-native: compared with stored ones)."""
    topics: dict[str, dict] = {
        str(pk): {
            "external_id": ext,
            "revision": int(rev),
            "annotations": [int(n or 0), int(ids or 0), int(done or 0)],
            "pyramids": [int(pyramids or 0), int(pyramid_ids or 0), int(revisions or 0)],
            "references": [int(links or 0), int(references or 0)],
        }
        for pk, ext, rev, n, ids, done, pyramids, pyramid_ids, revisions, links, references in queries.topic_states(
            dataset.pk
        )
    }
    systems = hashlib.sha256(
        repr(
            list(
                PeerSummary.objects.filter(topic__dataset=dataset)
                .exclude(system_id="")
                .order_by("id")
                .values_list("id", "system_id")
            )
        ).encode()
    ).hexdigest()
    return {
        "version": VERSION,
        "dataset": dataset.name,
        "topics": topics,
        "systems": systems,
        "judgments": _judgment_digest(dataset),
        "resamples": settings.METAEVAL_RESAMPLES,
    }


def is_current(snapshot: DatasetDashboard, live: dict | None = None) -> bool:
    return snapshot.fingerprint == (live if live is not None else fingerprint(snapshot.dataset))


# --- the figures ----------------------------------------------------------------------------


def _reusable(dataset: Dataset, topics: list[Topic], live: dict, previous: DatasetDashboard | None) -> set[int]:
    """Topics whose part of the state is unchanged since the previous snapshot (their figures are reused)."""
    if (
        previous is None
        or previous.fingerprint.get("version") != VERSION
        or previous.fingerprint.get("dataset") != dataset.name
    ):
        return set()
    before = previous.fingerprint.get("topics", {})
    return {t.pk for t in topics if before.get(str(t.pk)) == live["topics"][str(t.pk)]}


def _rows(
    topics: list[Topic], convention: Convention, reusable: set[int], previous: DatasetDashboard | None
) -> list[dict]:
    """``score_rows`` of the dataset (references included), reusing unchanged topics' rows."""
    names = {t.external_id for t in topics if t.pk in reusable}
    old_rows = previous.data["conventions"][convention.value]["per_topic"] if names else []
    stale = [t.pk for t in topics if t.pk not in reusable]
    fresh = score_rows(Topic.objects.filter(pk__in=stale), convention) if stale else []
    peers: dict[str, list] = defaultdict(list)
    references: dict[str, list] = defaultdict(list)
    for row in [r for r in old_rows if r["topic"] in names] + fresh:
        (peers if row["kind"] == "peer" else references)[row["topic"]].append(row)
    # score_rows order: every peer row (by topic), then every reference row (by topic).
    return [r for t in topics for r in peers[t.external_id]] + [r for t in topics for r in references[t.external_id]]


def _metaeval(
    dataset: Dataset,
    convention: Convention,
    rows: list[dict],
    summarizers: dict,
    judgments: list,
    score: str,
    intervals: list,
) -> list[dict]:
    """``dashboards.metaeval_table(...)["rows"]`` from rows already computed (it would rescore every
    summary for each score; the tests check that both give the same table). Bootstrap intervals of
    the rows shown by default are appended to ``intervals``."""
    from annotation.dashboards import statistics as system_statistics  # see compute_payload

    pyramid_metric = f"pyramid_{score}"
    observations = figures._observations(rows, judgments, summarizers, score, pyramid_metric).get(dataset.name, [])
    table = []
    for metric in sorted({j[3] for j in judgments}):
        for label, kinds in figures.SUMMARIZERS.items():
            meta = meta_evaluate((o for k, o in observations if k in kinds), pyramid_metric, metric)
            rows_ = figures._table_rows(
                meta, dataset=dataset.name, convention=convention, score=score, metric=metric, summarizers=label
            )
            if (label, score) in system_statistics.METAEVAL_INTERVALS:
                intervals.append(
                    {
                        "metric": metric,
                        "summarizers": label,
                        "score": score,
                        "levels": system_statistics.correlation_intervals(meta.pairs.values),
                    }
                )
            skipped = {str(t): reason for t, reason in meta.summary["pearson"].skipped.items()}
            rows_[0]["skipped"] = skipped
            table += rows_
    return table


def _agreement_details(
    shared: dict, rows: list[dict], topics_by_id: dict, convention: Convention, pyramids, inputs
) -> dict:
    """topic -> per-peer alpha and both compared annotators' scores, with reasons and units."""
    by_topic = {r["topic"]: r for r in rows}
    involved = [a for group in shared.values() for a in group]
    scores = score_annotations(involved, convention)
    out = {}
    for topic_id in sorted({k[0] for k in shared}, key=lambda t: topics_by_id[t].external_id):
        topic = topics_by_id[topic_id].external_id
        row = by_topic.get(topic)
        if row is None:
            continue
        keys = sorted(k for k in shared if k[0] == topic_id)
        several = len({k[1] for k in keys}) > 1
        a_name, b_name = row["compared_annotators"]
        matrices, peers = {}, []
        for _, pyramid_id, peer in keys:
            label = f"{peer} (pyramid {pyramid_id})" if several else peer
            group = shared[(topic_id, pyramid_id, peer)]
            matrices[label] = peer_matrix(
                [s.uid for s in pyramids[pyramid_id].scus], {a.annotator: dict(inputs[a.pk].matches) for a in group}
            )
            found = {a.annotator: scores[a.pk] for a in group}
            modified = {name: s.modified for name, s in found.items()}
            a, b = modified.get(a_name), modified.get(b_name)
            diff = abs(a - b) if a is not None and b is not None else None
            peers.append(
                {
                    "peer": label,
                    "summary": peer,
                    "pyramid": pyramid_id,
                    "alpha": row["alpha_dice_by_peer"][label],
                    "modified": modified,
                    "original": {name: s.original for name, s in found.items()},
                    "diff": diff,
                    "flagged": above_noise(diff),
                }
            )
        summary = alpha_dice_summary(matrices)
        pairs = [
            (p["modified"][a_name], p["modified"][b_name])
            for p in peers
            if p["modified"].get(a_name) is not None and p["modified"].get(b_name) is not None
        ]
        r = pearson([x for x, _ in pairs], [y for _, y in pairs]) if pairs else None
        out[topic] = {
            "peers": peers,
            "compared": [a_name, b_name],
            "compared_peers": len(pairs),
            "peers_in_mean": summary.peers_in_mean,
            "units_in_mean": summary.units_in_mean,
            "mean_reason": summary.mean_reason,
            "pooled_reason": summary.pooled.reason,
            "not_computable": [str(p) for p in summary.not_computable],
            "pearson_reason": (r.reason if r else "no peer scored by both annotators"),
            "pearson_ci_reason": r.ci_reason if r else None,
            "flagged": sum(p["flagged"] for p in peers),
        }
    return out


def _annotator_pairs(shared: dict, pyramids, inputs) -> list[dict]:
    """alpha_Dice pooled per annotator pair over every peer both annotated (same pyramid)."""
    names = sorted({a.annotator for group in shared.values() for a in group})
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            pooled: dict[str, dict] = {a: {}, b: {}}
            peers, topics = 0, set()
            for key, group in shared.items():
                found = {x.annotator: x for x in group}
                if a not in found or b not in found:
                    continue
                matrix = peer_matrix(
                    [s.uid for s in pyramids[key[1]].scus],
                    {name: dict(inputs[found[name].pk].matches) for name in (a, b)},
                )
                for coder, row in matrix.items():
                    pooled[coder].update({(key, uid): v for uid, v in row.items()})
                peers += 1
                topics.add(key[0])
            if not peers:
                continue
            alpha = alpha_dice(pooled)
            out.append(
                {
                    "a": a,
                    "b": b,
                    "value": alpha.value,
                    "reason": alpha.reason,
                    "units": alpha.units,
                    "peers": peers,
                    "topics": len(topics),
                }
            )
    return out


def compute_payload(dataset: Dataset, live: dict, previous: DatasetDashboard | None = None) -> dict:
    """Every figure of the dashboard; topics unchanged since ``previous`` are not recomputed."""
    # numpy and scipy.stats (most of a second): imported where the figures are computed, not by every
    # process that schedules them (an import's recomputation of agreement publishes the dashboards of its topics).
    from annotation.dashboards import statistics as system_statistics

    topics = list(Topic.objects.filter(dataset=dataset).order_by("external_id"))
    reusable = _reusable(dataset, topics, live, previous)
    names = {t.external_id for t in topics if t.pk in reusable}
    stale_topics = Topic.objects.filter(pk__in=[t.pk for t in topics if t.pk not in reusable])
    topics_qs = Topic.objects.filter(dataset=dataset)
    summarizers = figures._summarizers(topics_qs)
    judgments = list(
        Judgment.objects.filter(topic__dataset=dataset).values_list(
            "topic__dataset__name", "topic__external_id", "summary", "metric", "value"
        )
    )
    shared = shared_groups(topics_qs)
    stale_shared = {k: g for k, g in shared.items() if k[0] not in reusable}
    involved = [a for group in shared.values() for a in group]
    pyramids = load_pyramids({a.pyramid_id for a in involved})
    inputs = load_annotations(a.pk for a in involved)
    topics_by_id = {t.pk: t for t in topics}
    peer_inputs = system_statistics.load_peer_inputs(topics_qs)
    fresh_agreement = (
        agreement_rows_by_convention(stale_topics, Convention) if stale_shared else {c: [] for c in Convention}
    )
    tiers = figures.tier_histograms_by_convention(dataset.name, Convention)
    conventions = {}
    for convention in Convention:
        old = previous.data["conventions"][convention.value] if names else {"agreement": [], "agreement_details": {}}
        rows = _rows(topics, convention, reusable, previous)
        fresh = fresh_agreement[convention]
        agreement = sorted([r for r in old["agreement"] if r["topic"] in names] + fresh, key=lambda r: r["topic"])
        details = {t: d for t, d in old["agreement_details"].items() if t in names}
        details |= _agreement_details(stale_shared, fresh, topics_by_id, convention, pyramids, inputs)
        metaeval_intervals: list[dict] = []
        metaeval = {
            score: _metaeval(dataset, convention, rows, summarizers, judgments, score, metaeval_intervals)
            if judgments
            else []
            for score in METAEVAL_SCORES
        }
        conventions[convention.value] = {
            "per_topic": rows,
            "per_system": figures.system_rows(rows, summarizers, convention),
            "tiers": tiers[convention],
            "agreement": agreement,
            "agreement_details": dict(sorted(details.items())),
            "metaeval": metaeval,
            "metaeval_intervals": metaeval_intervals,
            "statistics": system_statistics.compute(
                dataset.name, rows, lambda r: figures._summarizer_of(r, summarizers), convention, peer_inputs
            ),
        }
    metrics: dict[str, int] = defaultdict(int)
    for j in judgments:
        metrics[j[3]] += 1
    return {
        "version": VERSION,
        "dataset": dataset.name,
        "conventions": conventions,
        "pairs": _annotator_pairs(shared, pyramids, inputs),
        "judgments": dict(sorted(metrics.items())),
    }


# --- storing --------------------------------------------------------------------------------


def store(dataset_id: int, payload: dict, live: dict, state_at) -> bool:
    """Write unless a snapshot read from a newer state is stored; True if written."""
    fields = {"payload": json.dumps(payload), "fingerprint": live, "state_at": state_at, "computed_at": timezone.now()}
    for _ in range(2):
        if DatasetDashboard.objects.filter(dataset_id=dataset_id, state_at__lte=state_at).update(**fields):
            return True
        if DatasetDashboard.objects.filter(dataset_id=dataset_id).exists():
            return False  # a newer snapshot is stored
        try:
            with transaction.atomic():
                DatasetDashboard.objects.create(dataset_id=dataset_id, **fields)
            return True
        except IntegrityError:
            continue  # created concurrently: compare again
    return False


def recompute_dataset(dataset_id: int) -> bool:
    """Compute and store one dataset's dashboard; True if written (False: gone, or a newer one is stored)."""
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if dataset is None:
        return False
    # The state (and its time) is read before the data: the data is never older than its fingerprint.
    state_at = timezone.now()
    live = fingerprint(dataset)
    previous = DatasetDashboard.objects.filter(dataset=dataset).first()
    return store(dataset.pk, compute_payload(dataset, live, previous), live, state_at)


def stale_among(dataset_ids: Iterable[int], found: dict | None = None) -> list[int]:
    """Those of these datasets whose stored snapshot (if any) was not computed from the live state.
    ``found``: filled with dataset id -> (live fingerprint, the stored snapshot's ``computed_at``,
    None without one) for the stale ones."""
    ids = list(dataset_ids)
    stored = {
        pk: (print_, at)
        for pk, print_, at in DatasetDashboard.objects.filter(dataset_id__in=ids).values_list(
            "dataset_id", "fingerprint", "computed_at"
        )
    }
    stale = []
    for dataset in Dataset.objects.filter(pk__in=ids).order_by("pk"):
        live = fingerprint(dataset)
        before, at = stored.get(dataset.pk, (None, None))
        if before != live:
            stale.append(dataset.pk)
            if found is not None:
                found[dataset.pk] = (live, at)
    return stale


WATCHED_SECONDS = 120  # a dashboard looked at (a page, its status.json polled) this recently is kept current


def _watched_key(dataset_id: int) -> str:
    return f"dashboard:watched:{dataset_id}"


def _seen_key(dataset_id: int) -> str:
    return f"dashboard:seen:{dataset_id}"


# Set once in the cache, never expiring: its absence says the cache holds no "seen" marks to measure
# a quiet spell by (Redis restarted empty after an outage, or never used yet).
MARKS_KEPT_KEY = "dashboard:marks-kept"


def note_watched(dataset_id: int) -> None:
    """Someone looks at the dataset's figures: while they do, its dashboard follows every change
    (at most once per ``DASHBOARD_INTERVAL_SECONDS``). Never raises."""
    try:
        cache.set(_watched_key(dataset_id), 1, timeout=WATCHED_SECONDS)
    except Exception:
        log.warning("cache unavailable: dataset %s's dashboard is not noted as looked at", dataset_id)


def _due_now(stale: list[int], found: dict) -> tuple[list[int], list[int]]:
    """Of these stale datasets: those to recompute now and those that wait for a quiet spell.

    Recomputing a whole dataset's statistics after every interval while an annotator saves a match
    every few seconds cost 130 ms of the worker's CPU per save (issue 33). So a dashboard nobody
    looked at in the last ``WATCHED_SECONDS`` waits until its data has stayed the same for
    ``DASHBOARD_QUIET_SECONDS`` (its live fingerprint seen unchanged that long before; each look
    notes it), unless it has none yet or is older than ``DASHBOARD_UNWATCHED_SECONDS``, or the cache
    lost its marks (``MARKS_KEPT_KEY``). With the in-process runner (no workers) everything is
    recomputed now, as nothing is spaced there."""
    if not stale or queue.in_process():
        return stale, []
    now = time.time()
    quiet, longest = settings.DASHBOARD_QUIET_SECONDS, settings.DASHBOARD_UNWATCHED_SECONDS
    try:
        marks = cache.get_many([_watched_key(pk) for pk in stale] + [_seen_key(pk) for pk in stale] + [MARKS_KEPT_KEY])
        if MARKS_KEPT_KEY not in marks:
            # Redis lost every mark (restarted empty): how long each dataset's data has been quiet is
            # unknown, and waiting a quiet spell from now would add it to the recovery (up to a
            # minute after an outage, with the sweep's 30 s). Nothing is deferred this once.
            cache.add(MARKS_KEPT_KEY, 1, timeout=None)
            return stale, []
    except Exception:  # the cache is Redis: without it, nothing is deferred
        return stale, []
    ready, later, seen = [], [], {}
    for pk in stale:
        live, computed_at = found[pk]
        digest = hashlib.sha256(json.dumps(live, sort_keys=True).encode()).hexdigest()
        seen_digest, seen_at = marks.get(_seen_key(pk)) or (None, now)
        if (
            _watched_key(pk) in marks
            or computed_at is None
            or (now - computed_at.timestamp()) >= longest
            or (seen_digest == digest and now - seen_at >= quiet - 1)  # a countdown ends a little early
        ):
            ready.append(pk)
        else:
            later.append(pk)
            if seen_digest != digest:
                seen[_seen_key(pk)] = (digest, now)
    if seen:
        try:
            cache.set_many(seen, timeout=math.ceil(longest + quiet))
        except Exception:
            return stale, []
    return ready, later


def recompute_datasets(dataset_ids: Iterable[int]) -> int:
    """The dashboard job: recompute those of these datasets whose snapshot is not current (a copy of
    a message delivered again after its run, or another message for an unchanged dataset, computes
    nothing: ``queue.start``), each at most once per ``DASHBOARD_INTERVAL_SECONDS`` (those computed
    more recently are put off: ``queue.due``), a dashboard nobody looks at once its data is quiet
    (``_due_now``: the others are published again to look after ``DASHBOARD_QUIET_SECONDS``)."""
    found: dict[int, tuple] = {}
    waiting: list[int] = []

    def due_now(ids: list[int]) -> list[int]:
        ready, later = _due_now(stale_among(ids, found), found)
        waiting.extend(later)
        return ready

    ids = queue.start("dashboard", dataset_ids, due_now)
    _look_again(waiting)
    return sum(recompute_dataset(pk) for pk in ids)


def _look_again(dataset_ids: list[int]) -> None:
    """Publish the datasets put off (``_due_now``) to be looked at again after the quiet spell, once:
    each run releases the pending marks of its ids first (``queue.start``), so a message published
    meanwhile (the agreement's, a sweep's) would start a second chain of looks beside this one, and
    each chain's run would release the other's mark: 61 looks in 3 minutes instead of 16. A mark
    held until the look is due lets one chain through."""
    if not dataset_ids:
        return
    wait = min(settings.DASHBOARD_QUIET_SECONDS, queue.longest_countdown())
    try:
        mine = [pk for pk in dataset_ids if cache.add(f"dashboard:look:{pk}", 1, timeout=max(1, math.floor(wait) - 1))]
    except Exception:  # the cache is Redis: without it, publish (the queue de-duplicates what it can)
        mine = dataset_ids
    if mine:
        queue.dispatch("dashboard", mine, delay=settings.DASHBOARD_QUIET_SECONDS)


RETRY_AFTER_SECONDS = 5  # what a page download asks a client to wait while the first snapshot is computed
FIRST_SNAPSHOT_PATIENCE = 60  # seconds before a dataset's first snapshot, still missing, is scheduled again


def _schedule_first(dataset_id: int) -> None:
    """Schedule a dataset's first snapshot, once per ``FIRST_SNAPSHOT_PATIENCE``: while it is being
    computed every page polls ``status.json`` every 3 s, and each poll would otherwise queue one more
    whole computation behind the running one (its pending mark is released when it starts). If it
    failed, the next look after that delay schedules it again. Run in the caller (tests), always."""
    if queue.runner.synchronous:
        schedule([dataset_id])
        return
    try:
        first = cache.add(f"dashboard:first:{dataset_id}", 1, timeout=FIRST_SNAPSHOT_PATIENCE)
    except Exception:  # the cache is Redis: without it, schedule (the queue de-duplicates what it can)
        log.warning("cache unavailable: the first dashboard of dataset %s scheduled without de-duplication", dataset_id)
        first = True
    if first:
        schedule([dataset_id])


def snapshot_for(dataset: Dataset, *, compute_missing: bool = False) -> tuple[DatasetDashboard | None, bool]:
    """The stored snapshot and whether it is current, never computed on a page's request: a stale
    one is returned as it is and its recomputation scheduled; when there is none yet, the first one
    is scheduled and ``(None, False)`` returned (the pages then say the figures are being computed
    and reload themselves when they land, the page downloads answer 503 with Retry-After). Where the
    background runner runs in the caller (tests: ``runner.synchronous``, or eager Celery) the
    scheduled computation has already happened, and its snapshot is returned.

    ``compute_missing``: compute a missing first snapshot here instead (the REST API, whose contract
    is a 200 with the rows: scripts do not retry; once per dataset, 3-6 s for DUC 2006)."""
    note_watched(dataset.pk)
    stored = DatasetDashboard.objects.filter(dataset=dataset).defer("payload")  # decoded once per process: ``data``
    snapshot = stored.first()
    if snapshot is None and compute_missing:
        recompute_dataset(dataset.pk)
        snapshot = stored.first()
    if snapshot is None:
        _schedule_first(dataset.pk)
        snapshot = stored.first()
        if snapshot is None:
            return None, False
    live = fingerprint(dataset)
    if is_current(snapshot, live):
        return snapshot, True
    schedule([dataset.pk])
    # Run synchronously (tests) the recomputation has already happened: read it back.
    snapshot = stored.get()
    return snapshot, is_current(snapshot, live)


# --- scheduling -----------------------------------------------------------------------------


def schedule(dataset_ids: Iterable[int]) -> None:
    """Enqueue one dashboard recomputation per dataset and burst. Never raises."""
    try:
        queue.publish("dashboard", dataset_ids)
    except Exception:
        log.exception("scheduling dashboard recomputation failed; the dashboards stay stale until viewed")


def schedule_with_workers(dataset_ids: Iterable[int]) -> None:
    """``schedule``, only with workers: in-process, the one background thread would recompute a
    whole dataset's dashboard after every burst of edits, delaying the next scores; there the
    dashboard is recomputed when a coordinator looks (``status.json`` and the pages schedule a
    stale snapshot)."""
    if not queue.in_process():
        schedule(dataset_ids)


def stale_datasets() -> list[int]:
    """Datasets whose stored dashboard lags behind the data (or that have none but have topics)."""
    return stale_among(Dataset.objects.filter(topics__isnull=False).distinct().values_list("pk", flat=True))

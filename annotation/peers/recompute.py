"""Keep stored scores and agreement in step with the data, never inside a request.

- ``schedule`` (called after a commit) publishes what the commit made stale through the one
  background path (``annotation.jobs.queue``: run in-process without ``REDIS_URL``, the Celery
  task ``annotation.recompute_scores`` / ``recompute_agreement`` with it, once per burst).
- Recomputation is incremental: annotations whose stored scores are current are skipped; a
  pyramid's weights and jackknife pyramids are prepared once per convention
  (``scoring.scores.prepare``) for all its peers and kept per process while its revision stands
  (``prepared_pyramids``), so an annotation edit reads only that annotation's matches; the
  results are stored in one statement.
- Results carry the revisions they were computed from and are written only if nothing newer is
  stored, so a slow task never overwrites a fresher result.
- If Redis is down the save has already committed and answered; the results are stale (their
  revisions lag behind, and ``jobs.queue.scoring_delayed`` tells the pages why), and the periodic sweep
  ``schedule_stale`` (Celery beat, and every worker start) enqueues them once Redis is back.
"""

import logging
import time
from collections.abc import Iterable
from contextlib import nullcontext

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q

from annotation.corpus.models import Topic
from annotation.jobs import queue
from annotation.peers import queries
from annotation.peers.models import PeerAnnotation, TopicAgreement
from annotation.peers.prepared_pyramids import prepared_pyramids
from annotation.peers.results import agreement_rows_by_convention
from annotation.peers.scoring_inputs import load_annotations
from annotation.pyramids import construction
from scoring.model import Convention
from scoring.scores import score_prepared

log = logging.getLogger(__name__)
STORE_CHUNK = 1000  # results per statement of _store_scores (6 parameters each; SQLite allows 32,766)
_CONVENTIONS = {c.value for c in Convention}


def schedule(*, pyramid_ids=(), annotation_ids=(), topic_ids=()) -> None:
    """Recompute everything a committed change made stale, in the background. Never raises."""
    try:
        queue.publish("pyramid", pyramid_ids)
        queue.publish("annotation", annotation_ids)
        queue.publish("topic", topic_ids)  # its agreement and construction agreement, one job (``recompute_topics``)
    except Exception:
        log.exception("scheduling score recomputation failed; results stay stale until the next sweep")


def _store_scores(results: list[tuple[int, str, tuple[int, int], dict]]) -> int:
    """Write each result unless a result from a newer state is stored; returns how many were written.

    One statement (``queries.store_scores``): each row is compared with what is stored atomically,
    so no lock, no read of the stored values and no per-row statement is needed. Rows go in one
    order, so concurrent writers lock them in the same order. A result whose annotation was deleted
    meanwhile is dropped."""
    if not results:
        return 0
    rows = sorted(results, key=lambda r: (r[0], r[1]))
    if len(rows) > STORE_CHUNK:  # one statement's parameters stay within every backend's limit
        return sum(_store_scores(rows[start : start + STORE_CHUNK]) for start in range(0, len(rows), STORE_CHUNK))
    # One statement is atomic by itself: outside a transaction (the worker, in autocommit) it needs
    # no BEGIN and COMMIT of its own (two round trips of the score task's six); inside one (an
    # eager task in its caller's), a savepoint keeps a refused row from breaking the caller's.
    atomic = transaction.atomic() if transaction.get_connection().in_atomic_block else nullcontext()
    try:
        with atomic:
            return queries.store_scores(rows)
    except IntegrityError:  # an annotation was deleted since it was read: store the others
        alive = set(PeerAnnotation.objects.filter(pk__in={r[0] for r in rows}).values_list("id", flat=True))
        kept = [r for r in rows if r[0] in alive]
        if len(kept) == len(rows):
            raise
        return _store_scores(kept)


def publish_annotations_of(pyramid_ids: Iterable[int]) -> None:
    """A changed pyramid's job: every annotation against it (turned into ids on the runner's
    thread, not in the request that changed the pyramid), rescored after
    ``PYRAMID_SCORE_DELAY_SECONDS``, and while its builder goes on editing at most once per
    ``PYRAMID_SCORE_SPACING_SECONDS`` (``queue.countdown``): the edits meanwhile coalesce into that
    one rescoring of all its annotations, instead of one per edit (an annotation's own edit is
    rescored at once, ``SCORE_DEBOUNCE_SECONDS``). Its topics' agreement and construction
    agreement (one job, ``recompute_topics``) wait as long, so they coalesce too and read the
    scores then stored (published here first, the same commit's immediate message for them finds
    them pending and sends nothing)."""
    pyramid_ids = list(pyramid_ids)
    rows = list(
        PeerAnnotation.objects.filter(pyramid_id__in=pyramid_ids).order_by().values_list("id", "pyramid__topic_id")
    )
    delay = queue.countdown("pyramid", pyramid_ids, settings.PYRAMID_SCORE_DELAY_SECONDS)
    if queue.dispatch("annotation", [pk for pk, _ in rows], delay=delay):
        queue.note_start("pyramid", pyramid_ids, time.time() + (delay or 0))
    if not queue.in_process():  # in-process everything runs now, in the runner's order
        queue.dispatch("topic", {topic for _, topic in rows}, delay=delay)


def recompute_annotations(annotation_ids: Iterable[int]) -> int:
    """Compute and store both conventions' scores of these annotations (those not current);
    returns how many were written.

    One query reads the revisions and what is stored; the pyramids come prepared from the
    process's cache when their revision has not moved (an annotation edit), else are read and
    prepared once; one query reads the matches, one statement stores the results."""
    ids = list(annotation_ids)
    queue.release("annotation", ids)
    # Revisions are read before the data, so the data is never older than the revision it is stored under.
    revisions, pyramid_of, pyramid_state = {}, {}, {}
    stored: dict[int, set] = {}
    for pk, pyramid_id, a_rev, p_rev, created, convention, s_p_rev, s_a_rev in (
        PeerAnnotation.objects.filter(pk__in=ids)
        .order_by()
        .values_list(
            "id",
            "pyramid_id",
            "revision",
            "pyramid__revision",
            "pyramid__created_at",
            "scores__convention",
            "scores__pyramid_revision",
            "scores__annotation_revision",
        )
    ):
        revisions[pk], pyramid_of[pk], pyramid_state[pyramid_id] = (p_rev, a_rev), pyramid_id, (created, p_rev)
        current = stored.setdefault(pk, set())
        if convention is not None and (s_p_rev, s_a_rev) == (p_rev, a_rev):
            current.add(convention)
    todo = sorted(pk for pk in revisions if stored[pk] != _CONVENTIONS)
    if not todo:
        return 0
    prepared = prepared_pyramids({pyramid_of[pk]: pyramid_state[pyramid_of[pk]] for pk in todo})
    inputs = load_annotations(todo)
    results = []
    for pk in todo:
        for convention, pyramid in prepared[pyramid_of[pk]].items():
            results.append((pk, convention.value, revisions[pk], score_prepared(pyramid, inputs[pk]).as_dict()))
    return _store_scores(results)


def stale_topics_among(topic_ids: Iterable[int]) -> list[int]:
    """Those of these topics whose stored agreement is missing or from another revision."""
    ids = list(topic_ids)
    current = dict(TopicAgreement.objects.filter(topic_id__in=ids).values_list("topic_id", "topic_revision"))
    revisions = Topic.objects.filter(pk__in=ids).order_by("pk").values_list("id", "revision")
    return [pk for pk, revision in revisions if current.get(pk) != revision]


def recompute_topics(topic_ids: Iterable[int]) -> int:
    """Compute and store the agreement figures and the construction agreement of these topics
    (each only where it is not current: ``stale_topics_among``, ``construction.stale_among``; the
    topics computed less than ``AGREEMENT_SPACING_SECONDS`` ago are put off: ``queue.start``);
    returns how many rows were written. One job for both: a save of a match makes both stale, and
    as two tasks the construction's ran once per save (it found nothing to do in a topic of one
    pyramid, so no start was noted to space it), a task's whole cost each. Their datasets'
    dashboards are scheduled whatever was computed: a dashboard also reads what no topic revision
    counts (an annotation finished, a pyramid created), is computed from the data, not from the
    agreement stored here, and tests its own currency (``snapshots.recompute_datasets``)."""
    ids = sorted(set(topic_ids))
    found: dict[str, list[int]] = {"agreement": [], "construction": []}

    def stale(ids: list[int]) -> list[int]:
        found["agreement"], found["construction"] = stale_topics_among(ids), construction.stale_among(ids)
        return sorted(set(found["agreement"]) | set(found["construction"]))

    due = set(queue.start("topic", ids, stale))
    written = _store_agreement([pk for pk in found["agreement"] if pk in due])
    written += construction.recompute_due(pk for pk in found["construction"] if pk in due)
    _publish_dashboards_of(ids)
    return written


def _store_agreement(topic_ids: list[int]) -> int:
    """Compute and store the agreement figures of these topics (their revision read before the data)."""
    stale = list(Topic.objects.filter(pk__in=topic_ids).select_related("dataset")) if topic_ids else []
    written = 0
    # One computation per convention for all of them (an import makes every topic stale at once);
    # a topic without a peer annotated twice has no row.
    found = agreement_rows_by_convention(stale, Convention) if stale else {}
    rows = {convention: {(row["dataset"], row["topic"]): row for row in rows} for convention, rows in found.items()}
    for topic in stale:
        revision = topic.revision
        values = {
            convention.value: rows[convention].get((topic.dataset.name, topic.external_id)) for convention in Convention
        }
        updated = TopicAgreement.objects.filter(topic=topic, topic_revision__lte=revision).update(
            values=values, topic_revision=revision
        )
        if not updated and not TopicAgreement.objects.filter(topic=topic).exists():
            try:
                with transaction.atomic():
                    TopicAgreement.objects.create(topic=topic, topic_revision=revision, values=values)
                updated = 1
            except IntegrityError:
                updated = 0
        written += updated
    return written


def _publish_dashboards_of(topic_ids: Iterable[int]) -> None:
    """The dashboards of these topics' datasets, now that their scores and agreement are stored:
    published by name (``dashboard``), the dashboards being a layer above. Only with workers: in
    process, the one background thread would recompute a whole dataset's dashboard after every
    burst of edits, delaying the next scores; there a dashboard is recomputed when a coordinator
    looks (``status.json`` and the pages schedule a stale snapshot). Never raises."""
    if queue.in_process():
        return
    try:
        queue.publish(
            "dashboard", set(Topic.objects.filter(pk__in=list(topic_ids)).values_list("dataset_id", flat=True))
        )
    except Exception:
        log.exception("could not publish the dashboards of topics %s; they stay stale until viewed", topic_ids)


def stale_work() -> tuple[list[int], list[int]]:
    """Annotations whose stored scores lag behind (or are missing), and topics likewise.

    Two queries that return only the stale ids: beat runs this every ``SWEEP_SECONDS`` whatever
    happened, and reading every stored score's revisions into Python to compare them here cost the
    worker ~5 ms a sweep on 20 pyramids of 22 annotations (3 ms now), more the larger the data
    (issue 33: at an annotator's pace every save pays its share of the sweeps); the database
    compares them instead."""
    current = Count(
        "scores",
        filter=Q(
            scores__convention__in=_CONVENTIONS,
            scores__pyramid_revision=F("pyramid__revision"),
            scores__annotation_revision=F("revision"),
        ),
    )
    annotations = list(
        PeerAnnotation.objects.order_by()
        .annotate(current=current)
        .filter(current__lt=len(_CONVENTIONS))
        .order_by("id")
        .values_list("id", flat=True)
    )
    topics = list(
        Topic.objects.filter(pyramids__annotations__isnull=False)
        .exclude(agreement__topic_revision=F("revision"))
        .order_by("id")
        .distinct()
        .values_list("id", flat=True)
    )
    return annotations, topics


def schedule_stale(chunk: int = 200) -> tuple[int, int]:
    """Recompute (no broker) or publish everything stale: the periodic sweep (beat), every worker
    start, ``manage.py recompute_stale``."""
    annotations, topics = stale_work()
    for start in range(0, len(annotations), chunk):
        queue.dispatch("annotation", annotations[start : start + chunk])
    queue.dispatch("topic", set(topics) | set(construction.stale_topics()))
    return len(annotations), len(topics)


def sweep_in_process() -> None:
    """The in-process runner's own sweep (with workers, beat runs ``schedule_stale`` instead)."""
    if queue.in_process():
        schedule_stale()

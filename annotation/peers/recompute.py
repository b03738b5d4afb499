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

from django.conf import settings
from django.db import IntegrityError, transaction

from annotation.corpus.models import Topic
from annotation.jobs import queue
from annotation.peers import queries
from annotation.peers.models import AnnotationScore, PeerAnnotation, TopicAgreement
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
        queue.publish("topic", topic_ids)
        queue.publish("construction", topic_ids)  # pyramid construction agreement (``pyramids.construction``)
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
    try:
        with transaction.atomic():
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
    agreement wait as long, so they coalesce too and read the scores then stored (published here
    first, the same commit's immediate messages for them find them pending and send nothing)."""
    pyramid_ids = list(pyramid_ids)
    rows = list(
        PeerAnnotation.objects.filter(pyramid_id__in=pyramid_ids).order_by().values_list("id", "pyramid__topic_id")
    )
    delay = queue.countdown("pyramid", pyramid_ids, settings.PYRAMID_SCORE_DELAY_SECONDS)
    if queue.dispatch("annotation", [pk for pk, _ in rows], delay=delay):
        queue.note_start("pyramid", pyramid_ids, time.time() + (delay or 0))
    if not queue.in_process():  # in-process everything runs now, in the runner's order
        topics = {topic for _, topic in rows}
        queue.dispatch("topic", topics, delay=delay)
        queue.dispatch("construction", topics, delay=delay)


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
    """Compute and store the agreement figures of these topics (those not current:
    ``stale_topics_among``; those computed less than ``AGREEMENT_SPACING_SECONDS`` ago are put off:
    ``queue.start``); returns how many were written. Their datasets' dashboards are scheduled
    whatever was computed: a dashboard also reads what no topic revision counts (an annotation
    finished, a pyramid created), is computed from the data, not from the agreement stored here,
    and tests its own currency (``snapshots.recompute_datasets``)."""
    ids = sorted(set(topic_ids))
    stale = list(Topic.objects.filter(pk__in=queue.start("topic", ids, stale_topics_among)).select_related("dataset"))
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
    _publish_dashboards_of(ids)
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
    """Annotations whose stored scores lag behind (or are missing), and topics likewise."""
    stored = {}
    for annotation_id, convention, p_rev, a_rev in AnnotationScore.objects.values_list(
        "annotation_id", "convention", "pyramid_revision", "annotation_revision"
    ):
        stored[(annotation_id, convention)] = (p_rev, a_rev)
    annotations = [
        pk
        for pk, a_rev, p_rev in PeerAnnotation.objects.values_list("id", "revision", "pyramid__revision")
        if any(stored.get((pk, c.value)) != (p_rev, a_rev) for c in Convention)
    ]
    agreed = dict(TopicAgreement.objects.values_list("topic_id", "topic_revision"))
    topics = [
        pk
        for pk, rev in Topic.objects.filter(pyramids__annotations__isnull=False)
        .distinct()
        .values_list("id", "revision")
        if agreed.get(pk) != rev
    ]
    return annotations, topics


def schedule_stale(chunk: int = 200) -> tuple[int, int]:
    """Recompute (no broker) or publish everything stale: the periodic sweep (beat), every worker
    start, ``manage.py recompute_stale``."""
    annotations, topics = stale_work()
    for start in range(0, len(annotations), chunk):
        queue.dispatch("annotation", annotations[start : start + chunk])
    queue.dispatch("topic", topics)
    queue.dispatch("construction", construction.stale_topics())
    return len(annotations), len(topics)


def sweep_in_process() -> None:
    """The in-process runner's own sweep (with workers, beat runs ``schedule_stale`` instead)."""
    if queue.in_process():
        schedule_stale()

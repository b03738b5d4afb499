"""Keep stored scores and agreement in step with the data, never inside a request.

- ``schedule`` (called after a commit) hands what the commit made stale to the background runner
  (``annotation/background.py``), whose thread calls ``dispatch``: without ``REDIS_URL`` it runs the
  service the Celery task calls, in-process (the same code a worker runs); with it, it publishes the task, once per
  burst (an annotation or topic already waiting in the queue is not published again: a Redis key
  marks it pending until the task starts, and expires after ``PENDING_TTL``, so a key left behind
  by a killed worker blocks nothing for long).
- Recomputation is incremental: annotations whose stored scores are current are skipped; a
  pyramid's weights and jackknife pyramids are prepared once per convention
  (``scoring.scores.prepare``) for all its peers and kept per process while its revision stands
  (``prepared_pyramids``), so an annotation edit reads only that annotation's matches; the
  results are stored in one statement.
- Results carry the revisions they were computed from and are written only if nothing newer is
  stored, so a slow task never overwrites a fresher result.
- If Redis is down the save has already committed and answered; the results are stale (their
  revisions lag behind, and ``scoring_delayed`` tells the pages why), and the periodic sweep
  ``schedule_stale`` (Celery beat, and every worker start) enqueues them once Redis is back.
"""
import logging
import sys
import time
from collections.abc import Iterable

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from scoring.model import Convention
from scoring.scores import score_prepared

from ..background import runner
from ..models import AnnotationScore, PeerAnnotation, Topic, TopicAgreement
from .results import agreement_rows_by_convention
from .prepared_pyramids import prepared_pyramids
from .scoring_inputs import load_annotations

log = logging.getLogger(__name__)
STORE_CHUNK = 1000  # results per statement of _store_scores (6 parameters each; SQLite allows 32,766)
PENDING_TTL = 60  # seconds; a key whose task was lost (worker killed) stops blocking new ones after this
_CONVENTIONS = {c.value for c in Convention}


def _pending_key(kind: str, pk: int) -> str:
    return f"pyramid:pending:{kind}:{pk}"


def _task(kind: str):
    from .. import lightweight_tasks, tasks

    return {"annotation": tasks.recompute_scores, "topic": tasks.recompute_agreement, "dashboard": tasks.recompute_dashboards,
            "lightweight": lightweight_tasks.recompute_lightweight}[kind]


def _work(kind: str):
    """The service each task is a thin call into (``annotation/tasks.py``, ``lightweight_tasks.py``),
    looked up when it runs: what the in-process runner calls directly."""
    from . import dashboard_snapshots, lightweight_runs

    return {"annotation": recompute_annotations, "topic": recompute_topics, "dashboard": dashboard_snapshots.recompute_datasets,
            "lightweight": lightweight_runs.recompute_runs}[kind]


def _in_process() -> bool:
    """Run here rather than publish? Without a broker yes, and without importing Celery (0.1 s of
    every command that saves, e.g. an import); once the Celery app is loaded its eager switch
    decides (the settings set it from REDIS_URL; tests turn it)."""
    if not settings.REDIS_URL and "pyramid_app.celery" not in sys.modules:
        return True
    from pyramid_app.celery import app

    return bool(app.conf.task_always_eager)


def dispatch(kind: str, ids: Iterable[int]) -> None:
    """Run (no broker) or publish (Celery) the recomputation of ``kind`` for ``ids``; called by the runner."""
    ids = sorted(set(ids))
    if not ids:
        return
    if kind == "pyramid":  # every annotation against these pyramids
        dispatch("annotation", PeerAnnotation.objects.filter(pyramid_id__in=ids).values_list("id", flat=True))
        return
    if _in_process():
        _work(kind)(ids)
        return
    task = _task(kind)
    try:
        fresh = [pk for pk in ids if cache.add(_pending_key(kind, pk), 1, timeout=PENDING_TTL)]
    except Exception:  # the cache is Redis too; without it, publish everything
        log.warning("cache unavailable: %s %s published without de-duplication", kind, ids)
        fresh = ids
    if not fresh:
        return
    try:
        delay = {"lightweight": settings.LIGHTWEIGHT_SCORE_DELAY_SECONDS, "dashboard": settings.DASHBOARD_DEBOUNCE_SECONDS}.get(
            kind, settings.SCORE_DEBOUNCE_SECONDS)
        task.apply_async(args=[fresh], countdown=delay or None)
    except Exception:
        log.warning("could not publish %s for %s %s: they stay stale until the sweep finds them", task.name, kind, fresh)
        _release(kind, fresh)


def _enqueue(kind: str, ids: Iterable[int]) -> None:
    runner.submit(kind, ids)


def schedule(*, pyramid_ids=(), annotation_ids=(), topic_ids=()) -> None:
    """Recompute everything a committed change made stale, in the background. Never raises."""
    try:
        _enqueue("pyramid", pyramid_ids)
        _enqueue("annotation", annotation_ids)
        _enqueue("topic", topic_ids)
    except Exception:
        log.exception("scheduling score recomputation failed; results stay stale until the next sweep")


def _release(kind: str, ids: Iterable[int]) -> None:
    if _in_process():
        return
    try:
        cache.delete_many([_pending_key(kind, pk) for pk in ids])
    except Exception:
        log.warning("cache unavailable while releasing pending %s keys", kind)


def _store_scores(results: list[tuple[int, str, tuple[int, int], dict]]) -> int:
    """Write each result unless a result from a newer state is stored; returns how many were written.

    One statement (``INSERT ... ON CONFLICT DO UPDATE ... WHERE``, the same SQL on SQLite and
    PostgreSQL): each row is compared with what is stored atomically, so no lock, no read of the
    stored values and no per-row statement is needed. Rows go in one order, so concurrent writers
    lock them in the same order. A result whose annotation was deleted meanwhile is dropped."""
    if not results:
        return 0
    rows = sorted(results, key=lambda r: (r[0], r[1]))
    if len(rows) > STORE_CHUNK:  # one statement's parameters stay within every backend's limit
        return sum(_store_scores(rows[start:start + STORE_CHUNK]) for start in range(0, len(rows), STORE_CHUNK))
    table = AnnotationScore._meta.db_table
    values_field, at_field = AnnotationScore._meta.get_field("values"), AnnotationScore._meta.get_field("computed_at")
    now = at_field.get_db_prep_save(timezone.now(), connection)
    params = [p for a, c, (p_rev, a_rev), v in rows for p in (a, c, p_rev, a_rev, values_field.get_db_prep_save(v, connection), now)]
    sql = (
        f'INSERT INTO {table} (annotation_id, convention, pyramid_revision, annotation_revision, "values", computed_at) '
        f'VALUES {", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(rows))} '
        'ON CONFLICT (annotation_id, convention) DO UPDATE SET pyramid_revision = excluded.pyramid_revision, '
        'annotation_revision = excluded.annotation_revision, "values" = excluded."values", computed_at = excluded.computed_at '
        f"WHERE {table}.pyramid_revision <= excluded.pyramid_revision AND {table}.annotation_revision <= excluded.annotation_revision"
    )
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.rowcount
    except IntegrityError:  # an annotation was deleted since it was read: store the others
        alive = set(PeerAnnotation.objects.filter(pk__in={r[0] for r in rows}).values_list("id", flat=True))
        kept = [r for r in rows if r[0] in alive]
        if len(kept) == len(rows):
            raise
        return _store_scores(kept)


def _store_score(annotation_id: int, convention: str, revisions: tuple[int, int], values: dict) -> bool:
    """Write unless a result from a newer state is stored; True if written."""
    return _store_scores([(annotation_id, convention, revisions, values)]) == 1


def recompute_annotations(annotation_ids: Iterable[int]) -> int:
    """Compute and store both conventions' scores of these annotations (those not current);
    returns how many were written.

    One query reads the revisions and what is stored; the pyramids come prepared from the
    process's cache when their revision has not moved (an annotation edit), else are read and
    prepared once; one query reads the matches, one statement stores the results."""
    ids = list(annotation_ids)
    _release("annotation", ids)
    # Revisions are read before the data, so the data is never older than the revision it is stored under.
    revisions, pyramid_of, pyramid_state = {}, {}, {}
    stored: dict[int, set] = {}
    for pk, pyramid_id, a_rev, p_rev, created, convention, s_p_rev, s_a_rev in (
        PeerAnnotation.objects.filter(pk__in=ids).order_by().values_list(
            "id", "pyramid_id", "revision", "pyramid__revision", "pyramid__created_at",
            "scores__convention", "scores__pyramid_revision", "scores__annotation_revision")
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


def recompute_topics(topic_ids: Iterable[int]) -> int:
    """Compute and store the agreement figures of these topics (those not current); returns how many were written."""
    ids = list(topic_ids)
    _release("topic", ids)
    current = dict(TopicAgreement.objects.filter(topic_id__in=ids).values_list("topic_id", "topic_revision"))
    stale = [topic for topic in Topic.objects.filter(pk__in=ids).select_related("dataset") if current.get(topic.pk) != topic.revision]
    # One computation per convention for all of them (an import makes every topic stale at once);
    # a topic without a peer annotated twice has no row.
    rows = {convention: {(row["dataset"], row["topic"]): row for row in rows} for convention, rows in agreement_rows_by_convention(stale, Convention).items()}
    written = 0
    for topic in stale:
        revision = topic.revision
        values = {convention.value: rows[convention].get((topic.dataset.name, topic.external_id)) for convention in Convention}
        updated = TopicAgreement.objects.filter(topic=topic, topic_revision__lte=revision).update(values=values, topic_revision=revision)
        if not updated and not TopicAgreement.objects.filter(topic=topic).exists():
            try:
                with transaction.atomic():
                    TopicAgreement.objects.create(topic=topic, topic_revision=revision, values=values)
                updated = 1
            except IntegrityError:
                updated = 0
        written += updated
    from .dashboard_snapshots import schedule_for_topics

    schedule_for_topics(ids)
    return written


def stale_work() -> tuple[list[int], list[int]]:
    """Annotations whose stored scores lag behind (or are missing), and topics likewise."""
    stored = {}
    for annotation_id, convention, p_rev, a_rev in AnnotationScore.objects.values_list(
        "annotation_id", "convention", "pyramid_revision", "annotation_revision"
    ):
        stored[(annotation_id, convention)] = (p_rev, a_rev)
    annotations = [
        pk for pk, a_rev, p_rev in PeerAnnotation.objects.values_list("id", "revision", "pyramid__revision")
        if any(stored.get((pk, c.value)) != (p_rev, a_rev) for c in Convention)
    ]
    agreed = dict(TopicAgreement.objects.values_list("topic_id", "topic_revision"))
    topics = [pk for pk, rev in Topic.objects.filter(pyramids__annotations__isnull=False).distinct().values_list("id", "revision") if agreed.get(pk) != rev]
    return annotations, topics


def schedule_stale(chunk: int = 200) -> tuple[int, int]:
    """Recompute (no broker) or publish everything stale: the periodic sweep (beat), every worker
    start, ``manage.py recompute_stale``."""
    annotations, topics = stale_work()
    for start in range(0, len(annotations), chunk):
        dispatch("annotation", annotations[start:start + chunk])
    dispatch("topic", topics)
    return len(annotations), len(topics)


def sweep_in_process() -> None:
    """The in-process runner's own sweep (with workers, beat runs ``schedule_stale`` instead)."""
    if _in_process():
        schedule_stale()


# --- what the pages say about stale results ---------------------------------------------------

_health = {"checked": float("-inf"), "reason": None}
HEALTH_EVERY = 3.0  # seconds between checks of Redis by one process


def scoring_delayed() -> str | None:
    """Why stale results cannot be recomputed now (None: they will be shortly). Checks Redis at most
    every few seconds, with a short timeout, so a page never waits for it."""
    if _in_process():
        return None
    now = time.monotonic()
    if now - _health["checked"] >= HEALTH_EVERY:
        import redis

        try:
            redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.3, socket_timeout=0.3).ping()
            reason = None
        except Exception:
            reason = "The scoring service is unreachable: scores are out of date and will be recomputed as soon as it is back."
        _health.update(checked=now, reason=reason)
    return _health["reason"]

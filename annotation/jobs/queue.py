"""The one background path: services publish work by name here, tasks call services.

A service that made something stale calls :func:`publish` (after its commit); the background
runner's thread (``runner``) then calls :func:`dispatch`, which either runs the service function
in-process (no ``REDIS_URL``: the embedded default needs no worker) or sends the Celery task by
its name, once per burst. Both are looked up in :data:`JOBS` by name, so this module imports no
service and no task module, and a service never imports a task: the modules form no circle
(``tests/foundation/test_import_cycles.py``). Each concept owns its tasks (``peers/tasks.py``,
``pyramids/tasks.py``, ``dashboards/tasks.py``, ``lightweight/tasks.py``), thin calls into its services, as doccano's
apps do.

De-duplication: an id already waiting in the queue is not published again (a Redis key marks it
pending until its task starts, :func:`release`). The mark lives as long as its message may go
unseen (:func:`pending_ttl`: the broker's visibility timeout, kombu's restore interval and the
job's countdown) and is renewed while its task waits for a running copy (``task_lock``): a mark
whose message was lost with a killed worker, or never sent, blocks the sweep for no longer than
that, so recovery never rests on the broker alone. If Redis is down the save has committed and
answered; the results stay stale (``scoring_delayed`` tells the pages why) and the periodic sweep
(beat, and every worker start) publishes them once Redis is back.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.core.cache.backends.redis import RedisCache
from django.utils.module_loading import import_string

from annotation.jobs import framework_internals
from annotation.jobs.runner import Runner

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Job:
    """One kind of background work. ``work``: the service function (dotted path) the task calls and
    the in-process runner calls directly; ``task``: the Celery task's registered name (None: always
    run here, it only turns ids into other jobs); ``delay``: the setting naming its countdown;
    ``spacing``: the setting naming the least time between two starts of its task for one id (a
    message published sooner after the last start waits for the rest: :func:`dispatch`)."""

    work: str
    task: str | None = None
    delay: str = "SCORE_DEBOUNCE_SECONDS"
    spacing: str | None = None


JOBS = {
    "pyramid": Job("annotation.peers.recompute.publish_annotations_of", spacing="PYRAMID_SCORE_SPACING_SECONDS"),
    "annotation": Job("annotation.peers.recompute.recompute_annotations", "annotation.recompute_scores"),
    "topic": Job(
        "annotation.peers.recompute.recompute_topics",
        "annotation.recompute_agreement",
        spacing="AGREEMENT_SPACING_SECONDS",
    ),
    # A topic's construction agreement is computed by its ``topic`` job (one task for both figures);
    # this job runs the messages queued by an older version, whose task name it keeps.
    "construction": Job(
        "annotation.pyramids.construction.recompute_topics",
        "annotation.recompute_construction",
        spacing="AGREEMENT_SPACING_SECONDS",
    ),
    "automatic": Job(
        "annotation.pyramids.automatic_peer_scores.compute_pyramids", "annotation.compute_automatic_scores"
    ),
    "lightweight": Job(
        "annotation.lightweight.scores.recompute_runs",
        "annotation.recompute_lightweight",
        "LIGHTWEIGHT_SCORE_DELAY_SECONDS",
    ),
    "dashboard": Job(
        "annotation.dashboards.snapshots.recompute_datasets",
        "annotation.recompute_dashboards",
        "DASHBOARD_DEBOUNCE_SECONDS",
        "DASHBOARD_INTERVAL_SECONDS",
    ),
}
SWEEP = "annotation.peers.recompute.sweep_in_process"
# The Celery app, named like the work: it lives in the project package (the top layer), which loads
# every concept's tasks; imported on first use only (``pyramid_app/__init__.py`` says why).
CELERY_APP = "pyramid_app.celery.app"


def celery_app():
    """The project's Celery app (importing it on the first call)."""
    return import_string(CELERY_APP)


def _pending_key(kind: str, pk: int) -> str:
    return f"pyramid:pending:{kind}:{pk}"


def _started_key(kind: str, pk: int) -> str:
    return f"pyramid:started:{kind}:{pk}"


def kind_of_task(name: str) -> str | None:
    """The job whose Celery task is called ``name`` (None: a task of no job, e.g. a sweep)."""
    return next((kind for kind, job in JOBS.items() if job.task == name), None)


def pending_ttl(kind: str | None) -> int:
    """Seconds a pending mark outlives its last sign of life. Its message is either waiting in the
    queue, or held by a worker (prefetched, or waiting for its countdown) which, if killed, leaves
    it to be delivered again once the visibility timeout has passed (found by a worker's restore,
    run every ``unacked_restore_interval``). The mark lasts that long and no longer: it was 60 s,
    so a message lost with a killed worker (or a request given up, ``task_lock``) kept the sweep
    from publishing its ids for up to a minute after everything else had recovered. A message
    waiting longer in a backlog may be published twice meanwhile: the second run finds its results
    current and returns."""
    return math.ceil(_seen_again() + (_longest_wait(kind) if kind else 0))


def _seen_again() -> float:
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    return options.get("visibility_timeout", 3600) + options.get("unacked_restore_interval", 10)


def _spacing(kind: str) -> float:
    job = JOBS[kind]
    return (getattr(settings, job.spacing) or 0) if job.spacing else 0


def _longest_wait(kind: str) -> float:
    return min(max(getattr(settings, JOBS[kind].delay) or 0, _spacing(kind)), longest_countdown())


def longest_countdown() -> float:
    """A message a worker holds longer than the broker's visibility timeout (waiting for its
    countdown, unacknowledged) is delivered again, and both copies run: a countdown never exceeds
    half of it. A longer spacing is completed by the task itself (:func:`due`)."""
    return settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("visibility_timeout", 3600) / 2


def countdown(kind: str, ids: list[int], delay: float | None = None) -> float | None:
    """The job's countdown (``delay``, else its setting), or, for a job with a ``spacing``, longer
    if the work of one of ``ids`` started (or was sent to start: :func:`note_start`) less than that
    long ago: while edits go on, a dataset's dashboard is recomputed at most once per
    ``DASHBOARD_INTERVAL_SECONDS``, a pyramid's annotations rescored at most once per
    ``PYRAMID_SCORE_SPACING_SECONDS`` and a topic's agreement and construction agreement at most
    once per ``AGREEMENT_SPACING_SECONDS``, not after every burst; after a quiet spell, after the delay."""
    wait = (getattr(settings, JOBS[kind].delay) if delay is None else delay) or 0
    spacing = _spacing(kind)
    if spacing and not in_process():
        try:
            started = [t for t in cache.get_many([_started_key(kind, pk) for pk in ids]).values() if t is not None]
        except Exception:  # the cache is Redis: without it, no spacing (the broker is likely gone too)
            started = []
        if started:
            wait = max(wait, max(started) + spacing - time.time())
    return min(wait, longest_countdown()) or None


def due(kind: str, ids: list[int]) -> list[int]:
    """Those of ``ids`` whose work may start now (part of a job's first step, :func:`start`): for
    a job with a ``spacing``, the others started less than that long ago, their message having
    waited the longest countdown only; they are published again to wait the rest."""
    spacing = _spacing(kind)
    if not spacing or in_process() or not ids:
        return ids
    try:
        started = cache.get_many([_started_key(kind, pk) for pk in ids])
    except Exception:
        return ids
    soon = time.time() + 1  # a countdown ends a little early or late: within a second is due
    early = [pk for pk in ids if (started.get(_started_key(kind, pk)) or 0) + spacing > soon]
    if early:
        release(kind, early, started=False)
        dispatch(kind, early)
    return [pk for pk in ids if pk not in early]


def start(kind: str, ids: Iterable[int], stale: Callable[[list[int]], list[int]]) -> list[int]:
    """A job's first step: those of ``ids`` whose work is to be done now, however often the message
    naming them is delivered. kombu delivers an unacknowledged message again every visibility
    timeout, also while a worker still runs it, and a worker at ``--concurrency=1`` runs its
    prefetched copy after the first run has finished: each copy must find its work done. So the ids'
    pending marks go first (a change from now on publishes anew), then ``stale`` keeps those whose
    stored results were not computed from what they would read now (the job's own currency test, a
    cheap read), and only then are those of a job with a ``spacing`` started too recently put off
    (:func:`due`): a copy of a finished job is acknowledged, not published again. The start of the
    rest is noted."""
    ids = sorted(set(ids))
    release(kind, ids, started=False)
    todo = due(kind, stale(ids)) if ids else []
    note_start(kind, todo)
    return todo


def note_start(kind: str, ids: Iterable[int], at: float | None = None) -> None:
    """The work of ``ids`` starts (or, ``at``: is sent to start then), for a job with a ``spacing``."""
    spacing = _spacing(kind)
    if not spacing or in_process():
        return
    at = time.time() if at is None else at
    try:
        cache.set_many({_started_key(kind, pk): at for pk in ids}, timeout=math.ceil(spacing + at - time.time()))
    except Exception:
        log.warning("cache unavailable while noting the start of %s %s", kind, ids)


def in_process() -> bool:
    """Run here rather than publish? Without a broker yes, and without importing Celery (0.1 s of
    every command that saves, e.g. an import); once the Celery app is loaded its eager switch
    decides (the settings set it from REDIS_URL; tests turn it)."""
    if not settings.REDIS_URL and CELERY_APP.rpartition(".")[0] not in sys.modules:
        return True
    return bool(celery_app().conf.task_always_eager)


def redis_cache(store=None) -> RedisCache | None:
    """The shared cache's backend when it is Redis (``store``: the cache to look behind, Django's
    default ``cache`` unless given), else None. Django's ``cache`` is a proxy to the backend,
    which ``isinstance`` does not see through: a check on the proxy never found Redis, so the
    single-round-trip paths below and in the throttles were never taken."""
    store = caches[DEFAULT_CACHE_ALIAS] if store is None or store is cache else store
    return store if isinstance(store, RedisCache) else None


def _claim(kind: str, ids: list[int], wait: float | None = None) -> list[int]:
    """Mark ``ids`` pending; returns those that were not already. On Redis one round trip for the
    whole burst (SET NX per key in a pipeline: a pyramid edit names every annotation against it,
    and one ``cache.add`` each cost a round trip of the app's CPU per annotation and write); the
    keys are the cache's own, so ``release`` deletes them as before. Other caches: ``cache.add``.
    ``wait``: the message's countdown, when it may be longer than the job's (the mark outlives it)."""
    keys, ttl = [_pending_key(kind, pk) for pk in ids], max(pending_ttl(kind), math.ceil(_seen_again() + (wait or 0)))
    redis = redis_cache()
    if redis is not None:
        with framework_internals.redis_client(redis).pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.set(redis.make_and_validate_key(key), 1, nx=True, ex=ttl)
            return [pk for pk, new in zip(ids, pipe.execute(), strict=True) if new]
    return [pk for pk, key in zip(ids, keys, strict=True) if cache.add(key, 1, timeout=ttl)]


def dispatch(kind: str, ids: Iterable[int], delay: float | None = None) -> list[int]:
    """Run (no broker) or send (Celery) the job ``kind`` for ``ids``; called by the runner's thread
    and by the sweeps. ``delay``: seconds the task waits (default: the job's setting, spaced:
    :func:`countdown`). Returns the ids run or sent (not those already waiting)."""
    ids = sorted(set(ids))
    if not ids:
        return []
    job = JOBS[kind]
    if job.task is None or in_process():
        import_string(job.work)(ids)
        return ids
    app = celery_app()
    wait = countdown(kind, ids, delay)
    try:
        fresh = _claim(kind, ids, wait)
    except Exception:  # the cache is Redis too; without it, publish everything
        log.warning("cache unavailable: %s %s published without de-duplication", kind, ids)
        fresh = ids
    if not fresh:
        return []
    try:
        app.send_task(job.task, args=[fresh], countdown=wait)
    except Exception:
        log.warning("could not publish %s for %s %s: they stay stale until the sweep finds them", job.task, kind, fresh)
        release(kind, fresh)
        return []
    return fresh


def publish(kind: str, ids: Iterable[int]) -> None:
    """Recompute ``kind`` for ``ids`` soon, off the request. Never raises, never blocks."""
    runner.submit(kind, ids)


def release(kind: str, ids: Iterable[int], started: bool = True) -> None:
    """A job's work has started for ``ids``: changes from now on publish it anew (for a job with a
    ``spacing``, the start is noted for that long: :func:`countdown`; ``started`` False: it was
    put off, :func:`due`)."""
    if in_process():
        return
    ids = list(ids)
    if started:
        note_start(kind, ids)
    try:
        cache.delete_many([_pending_key(kind, pk) for pk in ids])
    except Exception:
        log.warning("cache unavailable while releasing pending %s keys", kind)


def renew(kind: str, ids: Iterable[int]) -> None:
    """A message for ``ids`` is alive and waiting (its task retried while a copy runs): keep them
    marked pending for another :func:`pending_ttl`, so saves meanwhile publish nothing more."""
    if in_process():
        return
    try:
        cache.set_many({_pending_key(kind, pk): 1 for pk in ids}, timeout=pending_ttl(kind))
    except Exception:
        log.warning("cache unavailable while renewing pending %s keys", kind)


def _sweep() -> None:
    """Without workers nothing else sweeps: catch up on results left stale (by a crash, say)."""
    import_string(SWEEP)()


runner = Runner(dispatch, _sweep, sweep_every=60)

# --- what the pages say about stale results ---------------------------------------------------

_health = {"checked": float("-inf"), "reason": None}
HEALTH_EVERY = 3.0  # seconds between checks of Redis by one process


def scoring_delayed() -> str | None:
    """Why stale results cannot be recomputed now (None: they will be shortly). Checks Redis at most
    every few seconds, with a short timeout, so a page never waits for it."""
    if in_process():
        return None
    now = time.monotonic()
    if now - _health["checked"] >= HEALTH_EVERY:
        from annotation.jobs.redis_breaker import reachable  # fails at once while Redis failed moments ago

        reason = (
            None
            if reachable(settings.REDIS_URL)
            else (
                "The scoring service is unreachable: scores are out of date and will be recomputed as soon "
                "as it is back."
            )
        )
        _health.update(checked=now, reason=reason)
    return _health["reason"]

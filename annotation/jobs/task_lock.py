"""A recomputation task never runs twice at the same time.

Tasks are acknowledged late (a killed worker loses nothing), and kombu's Redis transport delivers
a message again once it has been unacknowledged for the visibility timeout, whether or not a worker
still runs it. A dashboard of a large meta-evaluation ran 238-292 s with a 45 s timeout: the same
task was delivered 5 times, both pool processes computed the same figures for 20 minutes, and an
annotator's score waited 13.7 minutes behind them.

So each run holds a Redis lock keyed by the task's name and arguments, whose value is the task's
id. A run that finds it held

- by its own id: a copy of the very message being run, delivered again: skipped (acknowledged
  without work; the running copy does it);
- by another id: a newer request for the same work, whose data may be newer than what the running
  copy read: retried after ``BUSY_RETRY_SECONDS`` for as long as the lock is held (no retry limit:
  Celery's default of 3 dropped such a request after 6 s while a killed worker's lock lived 12 s,
  and left its ids marked pending, so even the sweep did not publish them for a minute), its ids
  kept marked pending meanwhile (``queue.renew``), so it runs once the first is done.

The lock expires ``TASK_LOCK_SECONDS`` after its last renewal; a heartbeat thread renews it while
the task runs, so a task of minutes keeps it, and a worker killed mid-task leaves it for at most
that long (less than the visibility timeout: the copy delivered again then runs).

A copy may also arrive after its run has finished: a worker at ``--concurrency=1`` (the dashboards'
in docker-compose) prefetches the copy delivered while it runs the message, and starts it once the
lock is released. So a run that returns marks its task id done (``done_key``, for as long as copies
may still be delivered: ``queue.pending_ttl``) and a copy of a done task is acknowledged without
work. A run that raised, or whose worker was killed, marked nothing: its copy runs. Past that mark,
or for another message naming unchanged work, each job finds its results current and computes
nothing (``queue.start``).
Without Redis (eager tasks, no ``REDIS_URL``) nothing is locked: one thread runs everything.
"""

import hashlib
import json
import logging
import threading

from celery import Task
from django.conf import settings

from annotation.jobs import queue

log = logging.getLogger(__name__)
BUSY_RETRY_SECONDS = 2
_clients: dict = {}


def _redis():
    import redis

    client = _clients.get(settings.REDIS_URL)
    if client is None:
        client = _clients[settings.REDIS_URL] = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=5
        )
    return client


def done_key(task_id: str) -> str:
    return f"pyramid:done:{task_id}"


def _done_ttl(name: str) -> int:
    return queue.pending_ttl(queue.kind_of_task(name))


def _acquire_unless_done(lock, task_id: str) -> tuple[bool, bool]:
    """(done, acquired): whether ``task_id`` already finished, and the lock taken with its id as
    token. One round trip for both (a pipeline), not two: at an annotator's pace every save is one
    task, and each round trip is CPU of the worker's (issue 33). A copy of a finished task that took
    the lock meanwhile gives it back at once."""
    with _redis().pipeline(transaction=False) as pipe:
        pipe.exists(done_key(task_id))
        pipe.set(lock.name, task_id, nx=True, px=int(lock.timeout * 1000))
        done, acquired = (bool(x) for x in pipe.execute())
    if acquired:
        lock.local.token = task_id.encode()  # what ``lock.acquire`` notes for reacquire and release
        if done:
            lock.release()
    return done, acquired


def _mark_done_and_release(name: str, task_id: str, lock) -> None:
    """Mark the task done (for as long as copies may be delivered) and release its lock, in one
    round trip. A lock that expired or was taken by another run is not released (redis-py's own
    release script compares the token), nor reported: it expires by itself."""
    import redis.exceptions

    try:
        with _redis().pipeline(transaction=False) as pipe:
            if task_id:
                pipe.set(done_key(task_id), 1, ex=_done_ttl(name))
            lock.lua_release(keys=[lock.name], args=[lock.local.token], client=pipe)
            pipe.execute()
    except redis.exceptions.RedisError:
        log.warning("could not mark %s[%s] done or release its lock (Redis unreachable): both expire", name, task_id)


def lock_key(name: str, args) -> str:
    digest = hashlib.sha256(json.dumps(list(args), sort_keys=True, default=str).encode()).hexdigest()[:32]
    return f"pyramid:running:{name}:{digest}"


class _Heartbeat(threading.Thread):
    """Renews the lock every third of its lifetime until stopped."""

    def __init__(self, lock):
        super().__init__(name="pyramid-task-lock", daemon=True)
        self.lock, self.stopped = lock, threading.Event()

    def run(self):
        import redis.exceptions

        while not self.stopped.wait(self.lock.timeout / 3):
            try:
                self.lock.reacquire()
            except redis.exceptions.LockError:
                log.warning("the lock %s expired while its task ran; a copy may run alongside", self.lock.name)
                return
            except redis.exceptions.RedisError:
                log.warning("could not renew the lock %s (Redis unreachable); trying again", self.lock.name)


class RunsAlone(Task):
    """Base of the recomputation tasks (each concept's ``tasks.py``)."""

    max_retries = None  # retried while a copy runs, however long that takes (see above)

    def __call__(self, *args, **kwargs):
        if self.request.is_eager or not settings.REDIS_URL:
            return super().__call__(*args, **kwargs)
        import redis.exceptions

        task_id = self.request.id or ""
        # thread_local=False: the heartbeat thread renews it with the token taken here
        lock = _redis().lock(lock_key(self.name, args), timeout=settings.TASK_LOCK_SECONDS, thread_local=False)
        try:
            done, acquired = _acquire_unless_done(lock, task_id)
            holder = None if acquired or done else _redis().get(lock.name)
        except redis.exceptions.RedisError:
            log.warning("Redis unreachable: %s runs without its lock", self.name)
            return super().__call__(*args, **kwargs)
        if done:
            log.info("%s[%s] is delivered again after it finished: this copy is skipped", self.name, task_id)
            return None
        if not acquired:
            if holder is not None and holder.decode() == task_id:
                log.warning("%s[%s] is delivered again while it still runs: this copy is skipped", self.name, task_id)
                return None
            if holder is not None:
                kind = queue.kind_of_task(self.name)
                if kind and args:
                    queue.renew(kind, args[0])
                raise self.retry(countdown=BUSY_RETRY_SECONDS)
            return self.__call__(*args, **kwargs)  # released in between: take it now
        heartbeat = _Heartbeat(lock)
        heartbeat.start()
        finished = False
        try:
            result = super().__call__(*args, **kwargs)
            finished = True
            return result
        finally:
            heartbeat.stopped.set()
            if finished:
                _mark_done_and_release(self.name, task_id, lock)
            else:  # a run that raised marks nothing done: its copy runs
                try:
                    lock.release()
                except redis.exceptions.RedisError:  # expired (LockNotOwnedError) or Redis gone: it expires by itself
                    pass

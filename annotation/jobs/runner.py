"""One background thread per process that takes recomputation off the request.

After a commit, the services publish the ids they made stale (``annotation.jobs.queue.publish``,
which hands them to ``runner.submit``) and the request answers at once. The thread then either runs the very tasks a
Celery worker runs
(``annotation.peers.tasks``, without ``REDIS_URL``: the embedded default needs no worker) or, with
``REDIS_URL``, publishes them to Celery. Either way no request waits for scoring or for Redis:
when Redis is unreachable the publish fails here, the scores stay stale (and say so), and the
periodic sweep (``annotation.recompute_stale``, run by beat) enqueues them once Redis is back.

Bursts coalesce: ids submitted while the thread is busy are merged and handled together when it
is free, so a flurry of saves costs one recomputation, and an idle thread starts at once (no fixed
debounce wait). Work runs in a fixed order: scores, then agreement, then dashboards.
A changed pyramid is submitted as such and turned into its annotations here, not in the request.

Tests: ``wait()`` blocks until everything submitted so far is done, ``reset()`` drops what has not
started; with ``synchronous`` set, ``submit`` does the work in the caller (eager, as tests that
read a result right after a save expect).
"""

import atexit
import logging
import os
import threading
from collections.abc import Callable, Iterable

from django.db import connections

log = logging.getLogger(__name__)

KINDS = (
    "pyramid",
    "annotation",
    "topic",
    "construction",
    "lightweight",
    "dashboard",
    "automatic",
)  # the order a burst runs in ("pyramid": its annotations)


class Runner:
    def __init__(
        self,
        execute: Callable[[str, list[int]], None],
        sweep: Callable[[], None] | None = None,
        sweep_every: float = 60,
    ):
        self._execute = execute
        self._sweep = sweep
        self.sweep_every = sweep_every
        self._cond = threading.Condition()
        self._pending: dict[str, set[int]] = {}
        self._busy = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self.synchronous = False

    def submit(self, kind: str, ids: Iterable[int]) -> None:
        """Recompute ``kind`` (one of ``KINDS``) for ``ids`` soon. Never raises, never blocks."""
        ids = set(ids)
        if not ids:
            return
        if self.synchronous:
            self._run({kind: ids}, close=False)
            return
        with self._cond:
            self._pending.setdefault(kind, set()).update(ids)
            self._ensure_thread()
            self._cond.notify_all()

    def wait(self, timeout: float | None = 60) -> bool:
        """Block until nothing is pending or running; False if ``timeout`` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def reset(self, timeout: float | None = 60) -> bool:
        """Drop pending work and wait for the running burst to end (between tests)."""
        with self._cond:
            self._pending.clear()
        return self.wait(timeout)

    def stop(self, timeout: float | None = 60) -> None:
        """Finish what is pending, then end the thread (the next ``submit`` starts a new one)."""
        self.wait(timeout)
        with self._cond:
            thread, self._stopping = self._thread, True
            self._cond.notify_all()
        if thread is not None:
            thread.join(timeout)
        with self._cond:
            self._thread, self._stopping = None, False

    @property
    def idle(self) -> bool:
        with self._cond:
            return not self._pending and not self._busy

    def _ensure_thread(self) -> None:
        if self._pid != os.getpid():  # forked (gunicorn --preload): the parent's thread did not come along
            self._pid, self._thread, self._busy = os.getpid(), None, False
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="pyramid-background", daemon=True)
            self._thread.start()
            if not self._atexit:
                # A command (an import) must not exit before what it made stale is recomputed.
                atexit.register(self.wait, None)
                self._atexit = True

    _atexit = False

    def _loop(self) -> None:
        sweep_due = self._sweep is not None  # first thing: whatever a previous process left stale
        while True:
            with self._cond:
                if not sweep_due:
                    woke = self._cond.wait_for(
                        lambda: self._pending or self._stopping, self.sweep_every if self._sweep else None
                    )
                    sweep_due = not woke
                if self._stopping and not self._pending:
                    return
                batch, self._pending = self._pending, {}
                self._busy = True
            try:
                if sweep_due:
                    sweep_due = False
                    self._guarded(self._sweep)
                self._run(batch, close=True)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    @staticmethod
    def _guarded(job) -> None:
        try:
            job()
        except Exception:
            log.exception("the periodic sweep of stale results failed")

    def _run(self, batch: dict[str, set[int]], *, close: bool) -> None:
        try:
            for kind in sorted(batch, key=KINDS.index):
                try:
                    self._execute(kind, sorted(batch[kind]))
                except Exception:
                    log.exception(
                        "background %s recomputation of %s failed; they stay stale until the next sweep",
                        kind,
                        sorted(batch[kind]),
                    )
        finally:
            if close:
                # This thread's own connections: none is left open between bursts (nor across a dropped server).
                connections.close_all()

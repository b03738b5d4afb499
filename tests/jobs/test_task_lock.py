"""With Redis: a recomputation never runs twice at once (annotation/jobs/task_lock.py). A copy of the
running message delivered again is skipped, also after the lock's own lifetime (the heartbeat
renews it); a copy delivered after its run finished is skipped, one of a run that failed or was
killed runs; a newer request for the same work is retried for as long as the first runs, its ids
kept marked pending meanwhile; a lock left by a killed worker expires."""

import threading
import time

import pytest
from celery.canvas import Signature
from celery.exceptions import Retry

from annotation.jobs import queue, task_lock
from annotation.peers import recompute, tasks

pytestmark = pytest.mark.redis


class Blocked:
    """Stands in for the service a task calls: records each run, the first one waits for ``release``."""

    def __init__(self):
        self.runs, self.started, self.release = [], threading.Event(), threading.Event()

    def __call__(self, ids):
        self.runs.append(list(ids))
        if len(self.runs) == 1:
            self.started.set()
            self.release.wait(20)
        return len(ids)


def run_as_worker(task, task_id, *args, retries: int = 0):
    """Call the task as a worker's pool does: with a (non-eager) request of this id pushed, delivered
    for the ``retries``+1-th time."""
    task.push_request(id=task_id, is_eager=False, called_directly=False, retries=retries, args=args)
    try:
        return task(*args)
    finally:
        task.pop_request()


@pytest.fixture
def service(monkeypatch, settings):
    settings.TASK_LOCK_SECONDS = 1  # renewed every third of a second while the task runs
    blocked = Blocked()
    monkeypatch.setattr(recompute, "recompute_annotations", blocked)  # the task looks it up when it runs
    task_lock._redis().delete(
        task_lock.lock_key(tasks.recompute_scores.name, ([7, 8],)), *[task_lock.done_key(f"task-{x}") for x in "abcd"]
    )
    yield blocked
    blocked.release.set()


def test_a_copy_delivered_again_while_the_task_runs_is_skipped_even_past_the_locks_lifetime(service):
    first = threading.Thread(target=run_as_worker, args=(tasks.recompute_scores, "task-a", [7, 8]))
    first.start()
    assert service.started.wait(10)
    time.sleep(2.5)  # well past TASK_LOCK_SECONDS: only the heartbeat keeps the lock
    assert run_as_worker(tasks.recompute_scores, "task-a", [7, 8]) is None
    assert service.runs == [[7, 8]]  # the copy did not run
    service.release.set()
    first.join(10)
    assert not task_lock._redis().exists(task_lock.lock_key(tasks.recompute_scores.name, ([7, 8],)))  # released
    assert run_as_worker(tasks.recompute_scores, "task-d", [7, 8]) == 2  # once done, a new request can run
    assert service.runs == [[7, 8], [7, 8]]


def test_a_copy_delivered_after_its_run_finished_is_skipped(service):
    """A worker at --concurrency=1 prefetches the copy delivered again while it runs a message, and
    starts it once the run released its lock: the copy of a finished task does no work (issue 31)."""
    service.release.set()
    assert run_as_worker(tasks.recompute_scores, "task-a", [7, 8]) == 2
    assert run_as_worker(tasks.recompute_scores, "task-a", [7, 8]) is None
    assert run_as_worker(tasks.recompute_scores, "task-a", [7, 8], retries=1) is None
    assert service.runs == [[7, 8]]
    ttl = task_lock._redis().ttl(task_lock.done_key("task-a"))
    assert 0 < ttl <= queue.pending_ttl("annotation")  # for as long as copies may be delivered, no longer


def test_a_copy_of_a_run_that_failed_runs(service, monkeypatch):
    """A run that raised completed nothing: its copy runs (as a killed worker's, below)."""

    def failing(ids):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(recompute, "recompute_annotations", failing)
    with pytest.raises(RuntimeError):
        run_as_worker(tasks.recompute_scores, "task-a", [7, 8])
    monkeypatch.setattr(recompute, "recompute_annotations", service)
    service.release.set()
    assert run_as_worker(tasks.recompute_scores, "task-a", [7, 8]) == 2
    assert service.runs == [[7, 8]]


@pytest.fixture
def with_workers():
    """Pending marks kept in Redis, as with workers (not eager); none left for the next tests."""
    from pyramid_app.celery import app

    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    yield
    queue.release("annotation", [7, 8, 9])
    app.conf.task_always_eager = eager


def test_a_newer_request_is_retried_for_as_long_as_the_running_one_lasts(service, with_workers, monkeypatch):
    """Celery's default limit (3 retries, 6 s) dropped the newer request while a killed worker's lock
    lived 12 s: its ids stayed marked pending, and even the sweep did not publish them for a minute
    (tests/scale, the worker killed mid-burst). Now it is sent again after BUSY_RETRY_SECONDS
    whatever its count, and its ids stay marked pending: a save meanwhile publishes nothing more."""
    resent = []
    monkeypatch.setattr(
        Signature, "apply_async", lambda sig, *a, **kw: resent.append((sig.id, sig.args, sig.options.get("countdown")))
    )
    first = threading.Thread(target=run_as_worker, args=(tasks.recompute_scores, "task-a", [7, 8]))
    first.start()
    assert service.started.wait(10)
    queue.release("annotation", [7, 8])  # the first run has started: its ids are published anew
    for retries in (0, 3, 4, 50):
        with pytest.raises(Retry):
            run_as_worker(tasks.recompute_scores, "task-b", [7, 8], retries=retries)
    assert resent == [("task-b", ([7, 8],), task_lock.BUSY_RETRY_SECONDS)] * 4
    assert queue._claim("annotation", [7, 8, 9]) == [9]  # 7 and 8: marked pending by the waiting request
    assert run_as_worker(tasks.recompute_scores, "task-c", [9]) == 1  # other work is not held up
    service.release.set()
    first.join(10)
    assert run_as_worker(tasks.recompute_scores, "task-b", [7, 8], retries=51) == 2  # its turn: it runs
    assert service.runs == [[7, 8], [9], [7, 8]]


def test_the_lock_of_a_killed_worker_expires_and_the_copy_runs(service):
    service.release.set()
    key = task_lock.lock_key(tasks.recompute_scores.name, ([7, 8],))
    task_lock._redis().set(key, "task-a", px=1000)  # held by a worker that was killed: no heartbeat
    assert run_as_worker(tasks.recompute_scores, "task-a", [7, 8]) is None
    time.sleep(1.2)
    assert run_as_worker(tasks.recompute_scores, "task-a", [7, 8]) == 2
    assert service.runs == [[7, 8]]

"""Issue 31 on the fault tests' stack (``conftest.py``): a dashboard job longer than the visibility
timeout, delivered again while it runs, runs once per change."""

import re
import time
from pathlib import Path

import pytest

from tests.faults.harness import (
    assert_no_task_given_up,
    client,
    wait_for,
)
from tests.faults.slow_dashboards import SLOW_WORKER, dashboard_runs, swapped

# The long job of issue 31: a dashboard run longer than the visibility timeout, delivered again while
# it runs, with production's order of timings scaled down (countdown <= half the visibility timeout
# < the run; lock < visibility timeout; DASHBOARD_INTERVAL_SECONDS a little longer than the run, so
# a copy that would run again does so while the test watches). Every process of the module's stack
# runs with them from its start (conftest.py).
STACK_SETTINGS = {"CELERY_VISIBILITY_TIMEOUT": "5", "TASK_LOCK_SECONDS": "3", "DASHBOARD_INTERVAL_SECONDS": "10"}
LOOP_SLOW_SECONDS = 8
# How long after a run a copy of its message may still start: delivered again once the visibility
# timeout has passed, by a worker's restore (every 5 s), then its countdown; with margin.
LOOP_QUIET_SECONDS = 12


def _full_runs(log: Path, dataset: int, since: float) -> list[dict]:
    return [run for run in dashboard_runs(log) if run["ids"] == [dataset] and run["start"] >= since]


def _received_twice(text: str) -> set[str]:
    """Ids of dashboard tasks this worker's log shows received more than once (delivered again)."""
    received = re.findall(r"Task annotation\.recompute_dashboards\[([^\]]+)\] received", text)
    return {task_id for task_id in received if received.count(task_id) > 1}


@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_dashboard_longer_than_the_visibility_timeout_runs_once_per_change(stack, ids, concurrency):
    """Issue 31: at ``--concurrency=1`` (docker-compose's dashboards worker) the copy of a long job
    delivered again while it ran was prefetched and started once the first run had released its lock,
    so it ran in full, was delivered again, and so on: 13 runs of one task in 10 minutes. At 1 and 2
    (the docs' shape), a job longer than the visibility timeout: one full run per change (slow_worker.py
    records the computations of figures only), a later change runs again, and a job whose worker is
    SIGKILLed mid-run completed nothing: it runs again, once."""
    log, name = stack.root / f"full-runs-{concurrency}.jsonl", f"loop-dashboards-{concurrency}"
    shape = ("worker", "-Q", "dashboards", "-n", "dashboards@%h", "--concurrency", str(concurrency))
    dashboards = stack.celery(
        *shape,
        name=name,
        program=SLOW_WORKER,
        loglevel="INFO",
        env={"RUNS_LOG": str(log), "SLOW_SECONDS": str(LOOP_SLOW_SECONDS)},
    )
    bob, dataset, annotation = client(stack, "bob"), ids["dataset"], ids["annotations"]["bob:1"]

    def change(uid: str) -> float:
        since = time.time()
        match = {"annotation": annotation, "scu": ids["scus"][uid], "parts": [{"start": 0, "end": 5}]}
        assert bob.post(stack.url("/api/matches/"), json=match, timeout=30).status_code == 201
        wait_for(lambda: _full_runs(log, dataset, since), 60, "a full run of the changed dataset's dashboard")
        return since

    with swapped(stack, dashboards=dashboards):
        stack.current(120)
        wait_for(lambda: all(run["end"] for run in dashboard_runs(log)), 60, "the runs of the worker's start done")
        for uid in ("4", "6"):  # a change, then a later one
            since = change(uid)
            wait_for(lambda: all(run["end"] for run in dashboard_runs(log)), 60, "the run done")
            time.sleep(LOOP_QUIET_SECONDS)
            started = [run["ids"] for run in dashboard_runs(log) if run["start"] >= since]
            assert started == [[dataset]], dashboard_runs(log)
            assert stack.probe("state")["stale_dashboards"] == []
        logged = (stack.root / f"{name}.log").read_text()
        assert _received_twice(logged), "no copy delivered again: the job was not longer than the visibility timeout"

        since = change("5")
        time.sleep(1)
        stack.dashboards.kill()  # SIGKILL mid-run: nothing completed, nothing acknowledged
        killed = time.time()
        stack.dashboards.start()
        wait_for(lambda: any(run["end"] for run in _full_runs(log, dataset, killed)), 90, "the killed job run again")
        time.sleep(LOOP_QUIET_SECONDS)
        runs = _full_runs(log, dataset, since)
        assert len(runs) == 2 and runs[0]["end"] is None and runs[1]["end"] and runs[1]["start"] >= killed, runs
        assert stack.probe("state")["stale_dashboards"] == []
        assert_no_task_given_up(stack, {name: 0})
    stack.current(120)

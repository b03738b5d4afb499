"""Issue 24 on the fault tests' stack (``conftest.py``): a dashboard that runs longer than the broker's
visibility timeout runs once at a time and never delays a score."""

import time

from tests.faults.harness import (
    DASHBOARDS_WORKER,
    SCORES_WORKER,
    assert_no_task_given_up,
    client,
    wait_for,
)
from tests.faults.slow_dashboards import SLOW_WORKER, dashboard_runs, swapped

# The broker's timings of the long-dashboard test, scaled down from production's (visibility timeout
# 20 s, lock 12 s) in every process of the app, as each process derives its countdowns and lock from
# them: what it guards depends on their order (countdown <= half the visibility timeout < the run;
# lock < visibility timeout), not on their size, and the run of 40 s it needed took two minutes.
# Every process of the module's stack runs with them from its start (conftest.py).
STACK_SETTINGS = {"CELERY_VISIBILITY_TIMEOUT": "10", "TASK_LOCK_SECONDS": "6"}
SLOW_SECONDS = 2 * int(STACK_SETTINGS["CELERY_VISIBILITY_TIMEOUT"])


def test_a_long_dashboard_runs_once_at_a_time_and_never_delays_a_score(stack, ids):
    """Issue 24: a dashboard of minutes was delivered again every visibility timeout (45 s) and run
    by both pool processes at once for 20 minutes; a score waited 13.7 minutes behind it. Here every
    dashboard takes twice the visibility timeout longer (both workers run slow_worker.py, so a
    dashboard on the scores' queue would hold the scores up)."""
    log = stack.root / "dashboard-runs.jsonl"
    slow = {"program": SLOW_WORKER, "env": {"RUNS_LOG": str(log), "SLOW_SECONDS": str(SLOW_SECONDS)}}
    bob = client(stack, "bob")
    annotation = ids["annotations"]["bob:1"]
    with swapped(
        stack,
        worker=stack.celery(*SCORES_WORKER, name="slow-scores", **slow),
        dashboards=stack.celery(*DASHBOARDS_WORKER, name="slow-dashboards", **slow),
    ):
        assert (
            bob.post(
                stack.url("/api/matches/"),
                json={"annotation": annotation, "scu": ids["scus"]["4"], "parts": [{"start": 0, "end": 5}]},
                timeout=30,
            ).status_code
            == 201
        )
        wait_for(lambda: dashboard_runs(log), 60, "a dashboard recomputation started")
        saved = time.monotonic()
        assert (
            bob.post(
                stack.url("/api/matches/"),
                json={"annotation": annotation, "scu": ids["scus"]["6"], "parts": [{"start": 6, "end": 9}]},
                timeout=30,
            ).status_code
            == 201
        )
        wait_for(
            lambda: bob.get(stack.url(f"/api/annotations/{annotation}/score/"), timeout=10).json()["current"],
            30,
            "the score current while the dashboard runs",
        )
        assert time.monotonic() - saved < 15
        assert dashboard_runs(log)[0]["end"] is None  # the dashboard still runs
        first = dashboard_runs(log)[0]
        wait_for(lambda: dashboard_runs(log)[0]["end"], 120, "the first dashboard done")
        # The request the second save published waits for it (retried, however long it runs) and runs
        # next, DASHBOARD_INTERVAL_SECONDS after the first started; Celery's default of 3 retries
        # dropped it after 6 s, leaving it to the sweep.
        wait_for(
            lambda: any(
                r["ids"] == first["ids"] and r["start"] >= dashboard_runs(log)[0]["end"] for r in dashboard_runs(log)
            ),
            30,
            "the newer request for the same dashboard run after the first",
        )
        wait_for(
            lambda: all(run["end"] for run in dashboard_runs(log)) and time.monotonic() - saved > SLOW_SECONDS + 10,
            150,
            "the dashboards done",
        )
        runs = dashboard_runs(log)
        # Delivered again while it ran (the run twice the visibility timeout): never run alongside, skipped.
        for i, a in enumerate(runs):
            for b in runs[i + 1 :]:
                assert a["ids"] != b["ids"] or a["end"] <= b["start"] or b["end"] <= a["start"], runs
        assert (
            "delivered again while it still runs: this copy is skipped"
            in (stack.root / "slow-dashboards.log").read_text()
        )
        assert_no_task_given_up(stack, {"slow-scores": 0, "slow-dashboards": 0})
    stack.current(120)

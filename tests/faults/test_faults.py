"""Faults survived (issues 13 and 24), on a production stack of our own (``harness.Stack``: PostgreSQL,
redis-server, gunicorn with 2 workers, the scores and dashboards workers, beat): Redis stopped and
started again, Redis killed under a worker holding unacknowledged and delayed messages, the worker
SIGKILLed mid-burst and restarted, database connections terminated, concurrent deletes.
Each asserts no 5xx, no save lost, and every score current (and equal to a fresh computation,
``probe.py``) within a minute of recovery."""

import json
import re
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

from tests.conftest import require
from tests.faults.harness import (
    DASHBOARDS_WORKER,
    SCORES_WORKER,
    Stack,
    assert_no_task_given_up,
    log_ends,
    missing_binaries,
    running,
    together,
    wait_for,
)


@pytest.fixture(scope="module")
def stack():
    reason = missing_binaries()
    require(reason is None, f"the fault tests start their own services: {reason}")
    with running(Stack(), settle=90) as stack:
        yield stack


@pytest.fixture(scope="module")
def ids(stack):
    return stack.probe("ids")


def client(stack, username: str) -> requests.Session:
    session = requests.Session()
    session.headers.update({"Authorization": f"Token {stack.probe('token', username)['token']}", "If-Match": "*"})
    return session


def browser_login(stack, username: str) -> requests.Session:
    session = requests.Session()
    session.get(stack.url("/accounts/login/"), timeout=10)
    session.post(
        stack.url("/accounts/login/"),
        data={
            "username": username,
            "password": f"demo-{username}",
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        headers={"Referer": stack.url("/accounts/login/")},
        timeout=10,
    )
    return session


def timed(call):
    start = time.monotonic()
    response = call()
    return response, time.monotonic() - start


def test_redis_down_saves_answer_at_once_pages_say_so_and_scores_catch_up(stack, ids):
    bob, coordinator = client(stack, "bob"), browser_login(stack, "coordinator")
    annotation = ids["annotations"]["bob:2"]
    before = stack.probe("state")["matches"]
    stack.redis.stop()
    try:
        answers = [
            timed(
                lambda: bob.post(
                    stack.url("/api/matches/"),
                    json={"annotation": annotation, "scu": ids["scus"]["5"], "parts": [{"start": 0, "end": 7}]},
                    timeout=30,
                )
            )
            for _ in range(5)
        ]
        assert [r.status_code for r, _ in answers] == [201] * 5
        took = sorted(t for _, t in answers)
        # Goal: within a second (19-38 s before). The machine running the suite may be loaded: the
        # median must meet it, a single save may not take more than a few seconds.
        assert took[len(took) // 2] < 1.0 and took[-1] < 3.0, [round(t, 2) for t in took]
        document, took = timed(lambda: bob.get(stack.url(f"/api/annotations/{annotation}/full/"), timeout=30))
        assert document.status_code == 200 and took < 3.0
        score = document.json()["score"]
        assert score["current"] is False and "unreachable" in score["delayed"]
        page, took = timed(lambda: coordinator.get(stack.url(f"/datasets/{ids['dataset']}/scores/"), timeout=30))
        assert page.status_code == 200 and took < 3.0 and "unreachable" in page.text
        token, _ = timed(lambda: bob.post(stack.url("/api/auth/token/"), timeout=30))
        assert token.status_code < 500
        assert stack.probe("state")["matches"] == before + 5  # every save committed
    finally:
        stack.redis.start()
    recovered = time.monotonic()
    state = stack.current(60)  # no restart of anything: the sweep finds the stale scores
    assert time.monotonic() - recovered < 60
    assert state["mismatches"] == [] and state["matches"] == before + 5
    assert bob.get(stack.url(f"/api/annotations/{annotation}/score/"), timeout=10).json()["current"] is True


def test_redis_killed_under_held_messages_the_workers_survive_and_scores_catch_up(stack, ids):
    """kombu 5.7.0 crashed the worker here ("Unrecoverable error: AttributeError(... 'hostname')"
    while restoring its unacknowledged messages), 2 times of 2, and nothing swept until a person
    restarted it (pyramid_app/broker.py)."""
    import redis

    bob = client(stack, "bob")
    broker = redis.Redis(port=stack.redis_port)
    for uid in ("3", "5"):
        assert (
            bob.post(
                stack.url("/api/matches/"),
                json={
                    "annotation": ids["annotations"]["bob:2"],
                    "scu": ids["scus"][uid],
                    "parts": [{"start": 0, "end": 7}],
                },
                timeout=30,
            ).status_code
            == 201
        )
    # The dashboard's recomputation waits DASHBOARD_DEBOUNCE_SECONDS in the worker: held, unacknowledged.
    wait_for(lambda: broker.hlen("unacked") and broker.zcard("unacked_index"), 30, "a delayed message held by a worker")
    assert stack.probe("state")["stale_annotations"] or stack.probe("state")["stale_dashboards"]
    stack.redis.kill()
    time.sleep(3)  # the workers and beat notice the loss and try to reconnect
    stack.redis.start()  # empty: the queues, the held messages and the pending keys are gone
    recovered = time.monotonic()
    state = stack.current(60)
    took = time.monotonic() - recovered
    assert took < 60 and state["mismatches"] == [], took
    print(f"Redis killed under held messages: everything current {took:.1f} s after it was back")
    for process in (stack.worker, stack.dashboards, stack.beat):
        assert process.proc.poll() is None, f"{process.log.name} exited: {process.log.read_text()[-2000:]}"


def test_worker_killed_mid_burst_everything_current_within_a_minute_of_restart(stack, ids):
    admin, bob, logs = client(stack, "admin"), client(stack, "bob"), log_ends(stack, "scores", "dashboards")
    statuses = []
    for i in range(4):
        statuses.append(
            admin.patch(
                stack.url(f"/api/scus/{ids['scus']['2']}/"), json={"label": f"Relabelled {i}"}, timeout=30
            ).status_code
        )
        statuses.append(
            bob.post(
                stack.url("/api/matches/"),
                json={"annotation": ids["annotations"]["bob:1"], "scu": None, "parts": [{"start": 0, "end": 3}]},
                timeout=30,
            ).status_code
        )
    assert set(statuses) == {200, 201}
    stack.worker.kill()  # SIGKILL, whatever it was doing
    killed = time.monotonic()
    time.sleep(1)
    stack.worker.start()
    # 68.7 s with the defaults of then (visibility timeout 45 s, sweep every 30 s); the harness runs
    # today's defaults, so this is the production bound, counted from the kill.
    state = stack.current(60)
    took = time.monotonic() - killed
    assert took < 60 and state["mismatches"] == [], took
    assert_no_task_given_up(stack, logs)
    print(f"worker killed mid-burst: everything current {took:.1f} s after the kill")


def _runs(log: Path) -> list[dict]:
    """The dashboard runs slow_worker.py recorded: one per start, with its end (None: still running)."""
    runs, open_ = [], {}
    for line in log.read_text().splitlines() if log.exists() else []:
        event = json.loads(line)
        if event["event"] == "start":
            open_[event["pid"]] = {"ids": event["ids"], "start": event["at"], "end": None}
            runs.append(open_[event["pid"]])
        else:
            open_.pop(event["pid"])["end"] = event["at"]
    return runs


# The broker's timings of the long-dashboard test, scaled down from production's (visibility timeout
# 20 s, lock 12 s) in every process of the app, as each process derives its countdowns and lock from
# them: what it guards depends on their order (countdown <= half the visibility timeout < the run;
# lock < visibility timeout), not on their size, and the run of 40 s it needed took two minutes.
SCALED_BROKER = {"CELERY_VISIBILITY_TIMEOUT": "10", "TASK_LOCK_SECONDS": "6"}
SLOW_SECONDS = 2 * int(SCALED_BROKER["CELERY_VISIBILITY_TIMEOUT"])


SLOW_WORKER = str(Path(__file__).with_name("slow_worker.py"))


def _stop_together(processes) -> None:
    """Each asked to stop at the same moment, then each waited for (a minute less than one by one)."""
    for process in processes:
        process.send()
    for process in processes:
        process.stop()


@contextmanager
def replaced(stack, env: dict, **processes):
    """Every process of the app restarted with ``env`` over its settings, those named in
    ``processes`` (``worker``, ``dashboards``) replaced by the ones given; the usual ones back after."""
    names = ("worker", "dashboards", "beat", "web")
    normal = [getattr(stack, name) for name in names]
    _stop_together(stack.services())
    for name, process in zip(names, normal, strict=True):
        setattr(stack, name, processes.get(name) or process.with_settings(env))
    try:
        for process in stack.services():
            process.start()
        stack.wait_ready()
        yield
    finally:
        _stop_together(stack.services())
        for name, process in zip(names, normal, strict=True):
            setattr(stack, name, process)
        for process in stack.services():
            process.start()
        stack.wait_ready()


def test_a_long_dashboard_runs_once_at_a_time_and_never_delays_a_score(stack, ids):
    """Issue 24: a dashboard of minutes was delivered again every visibility timeout (45 s) and run
    by both pool processes at once for 20 minutes; a score waited 13.7 minutes behind it. Here every
    dashboard takes twice the visibility timeout longer (both workers run slow_worker.py, so a
    dashboard on the scores' queue would hold the scores up)."""
    log = stack.root / "dashboard-runs.jsonl"
    slow = {"program": SLOW_WORKER, "env": {**SCALED_BROKER, "RUNS_LOG": str(log), "SLOW_SECONDS": str(SLOW_SECONDS)}}
    bob = client(stack, "bob")
    annotation = ids["annotations"]["bob:1"]
    with replaced(
        stack,
        SCALED_BROKER,
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
        wait_for(lambda: _runs(log), 60, "a dashboard recomputation started")
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
        assert _runs(log)[0]["end"] is None  # the dashboard still runs
        first = _runs(log)[0]
        wait_for(lambda: _runs(log)[0]["end"], 120, "the first dashboard done")
        # The request the second save published waits for it (retried, however long it runs) and runs
        # next, DASHBOARD_INTERVAL_SECONDS after the first started; Celery's default of 3 retries
        # dropped it after 6 s, leaving it to the sweep.
        wait_for(
            lambda: any(r["ids"] == first["ids"] and r["start"] >= _runs(log)[0]["end"] for r in _runs(log)),
            30,
            "the newer request for the same dashboard run after the first",
        )
        wait_for(
            lambda: all(run["end"] for run in _runs(log)) and time.monotonic() - saved > SLOW_SECONDS + 10,
            150,
            "the dashboards done",
        )
        runs = _runs(log)
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


# The long job of issue 31: a dashboard run longer than the visibility timeout, delivered again while
# it runs, with production's order of timings scaled down (countdown <= half the visibility timeout
# < the run; lock < visibility timeout; DASHBOARD_INTERVAL_SECONDS a little longer than the run, so
# a copy that would run again does so while the test watches).
LOOP_BROKER = {"CELERY_VISIBILITY_TIMEOUT": "5", "TASK_LOCK_SECONDS": "3", "DASHBOARD_INTERVAL_SECONDS": "10"}
LOOP_SLOW_SECONDS = 8
# How long after a run a copy of its message may still start: delivered again once the visibility
# timeout has passed, by a worker's restore (every 5 s), then its countdown; with margin.
LOOP_QUIET_SECONDS = 12


def _full_runs(log: Path, dataset: int, since: float) -> list[dict]:
    return [run for run in _runs(log) if run["ids"] == [dataset] and run["start"] >= since]


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
        env={**LOOP_BROKER, "RUNS_LOG": str(log), "SLOW_SECONDS": str(LOOP_SLOW_SECONDS)},
    )
    bob, dataset, annotation = client(stack, "bob"), ids["dataset"], ids["annotations"]["bob:1"]

    def change(uid: str) -> float:
        since = time.time()
        match = {"annotation": annotation, "scu": ids["scus"][uid], "parts": [{"start": 0, "end": 5}]}
        assert bob.post(stack.url("/api/matches/"), json=match, timeout=30).status_code == 201
        wait_for(lambda: _full_runs(log, dataset, since), 60, "a full run of the changed dataset's dashboard")
        return since

    with replaced(stack, LOOP_BROKER, dashboards=dashboards):
        stack.current(120)
        wait_for(lambda: all(run["end"] for run in _runs(log)), 60, "the runs of the worker's start done")
        for uid in ("4", "6"):  # a change, then a later one
            since = change(uid)
            wait_for(lambda: all(run["end"] for run in _runs(log)), 60, "the run done")
            time.sleep(LOOP_QUIET_SECONDS)
            assert [run["ids"] for run in _runs(log) if run["start"] >= since] == [[dataset]], _runs(log)
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


def test_dropped_database_connections_cost_no_request(stack, ids):
    bob = client(stack, "bob")
    url = stack.url(f"/api/annotations/{ids['annotations']['bob:2']}/full/")
    assert all(bob.get(url, timeout=30).status_code == 200 for _ in range(6))  # both web workers hold a connection
    terminated = stack.postgres.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'pyramid' AND pid <> pg_backend_pid()"
    )
    assert terminated
    statuses = [bob.get(url, timeout=30).status_code for _ in range(8)]
    statuses.append(
        bob.post(
            stack.url("/api/matches/"),
            json={
                "annotation": ids["annotations"]["bob:2"],
                "scu": ids["scus"]["3"],
                "parts": [{"start": 36, "end": 68}],
            },
            timeout=30,
        ).status_code
    )
    assert statuses == [200] * 8 + [201]
    assert stack.current(60)["mismatches"] == []


def _scu(stack, admin, ids, references):
    """A new SCU with one contributor per reference named (the first span of each text)."""
    first, *others = references
    scu = admin.post(
        stack.url("/api/scus/"),
        json={
            "pyramid": ids["pyramid"],
            "label": "Concurrent",
            "reference": ids["references"][first],
            "parts": [{"start": 0, "end": 4}],
        },
        timeout=30,
    ).json()
    contributors = [admin.get(stack.url(f"/api/contributors/?scu={scu['id']}"), timeout=30).json()["results"][0]["id"]]
    for ref in others:
        contributors.append(
            admin.post(
                stack.url("/api/contributors/"),
                json={"scu": scu["id"], "reference": ids["references"][ref], "parts": [{"start": 0, "end": 4}]},
                timeout=30,
            ).json()["id"]
        )
    return scu["id"], contributors


def test_concurrent_deletes_and_edits_give_correct_results(stack, ids):
    admin = client(stack, "admin")
    refs = sorted(ids["references"])
    for _ in range(3):
        # Two of three contributors deleted at once: the SCU stays with the third.
        scu, contributors = _scu(stack, admin, ids, refs[:3])
        answers = together(
            *[lambda c=c: admin.delete(stack.url(f"/api/contributors/{c}/"), timeout=30) for c in contributors[1:]]
        )
        assert [r.status_code for r in answers] == [204, 204]
        left = admin.get(stack.url(f"/api/scus/{scu}/"), timeout=30).json()
        assert left["weight"] == 1
        # Both contributors of an SCU deleted at once: the SCU goes with the last one.
        scu, contributors = _scu(stack, admin, ids, refs[:2])
        answers = together(
            *[lambda c=c: admin.delete(stack.url(f"/api/contributors/{c}/"), timeout=30) for c in contributors]
        )
        assert [r.status_code for r in answers] == [204, 204]
        assert admin.get(stack.url(f"/api/scus/{scu}/"), timeout=30).status_code == 404
        # An SCU deleted while it is being relabelled: no 500, and it is gone.
        scu, _ = _scu(stack, admin, ids, refs[:1])
        deleted, patched = together(
            lambda scu=scu: admin.delete(stack.url(f"/api/scus/{scu}/"), timeout=30),
            lambda scu=scu: admin.patch(stack.url(f"/api/scus/{scu}/"), json={"label": "Renamed"}, timeout=30),
        )
        assert deleted.status_code == 204 and patched.status_code in (200, 404), patched.text
        assert admin.get(stack.url(f"/api/scus/{scu}/"), timeout=30).status_code == 404
    empty = stack.postgres.sql(
        "SELECT count(*) FROM annotation_scu s WHERE NOT EXISTS "
        "(SELECT 1 FROM annotation_contributor c WHERE c.scu_id = s.id)"
    )
    assert empty == [(0,)]  # no SCU left without contributors

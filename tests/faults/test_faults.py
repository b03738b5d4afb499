"""Faults survived (issues 13 and 24), on a production stack of our own (``conftest.py``): Redis
stopped and started again, Redis killed under a worker holding unacknowledged and delayed messages,
the worker SIGKILLed mid-burst and restarted, database connections terminated, concurrent deletes.
Each asserts no 5xx, no save lost, and every score current (and equal to a fresh computation,
``probe.py``) within a minute of recovery. The long dashboards have files (and stacks) of their own:
``test_long_dashboard.py``, ``test_redelivered_dashboard.py``."""

import time

import requests

from tests.faults.harness import assert_no_task_given_up, client, log_ends, together, wait_for


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

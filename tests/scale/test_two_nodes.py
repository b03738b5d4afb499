"""Two nodes, as a deployment grows (issue 22): the production shape scaled out on an existing
engine (``tests/scale/stack.py``: two gunicorn process groups behind HAProxy, two scores workers,
one beat, nothing shared but PostgreSQL and Redis). On 2 cores this proves correctness, not
capacity: no lost update across nodes, a web node or a worker killed mid-request with nothing
acknowledged lost and every score current within a minute, lockouts and throttles counted across
nodes yet per client behind the proxy, sessions and CSRF valid on either node, per-process caches
never older than the database, a recomputation never run twice at once, beat's sweep run once.
One stack serves the whole module."""

import json
import re
import threading
import time
import uuid
from datetime import datetime

import pytest
import requests
from celery import Celery

from tests.conftest import require
from tests.faults.harness import assert_no_task_given_up, log_ends, missing_binaries, running, together, wait_for
from tests.scale.stack import HAPROXY, NODES, TwoNodes, served_by, session_from

pytestmark = pytest.mark.scale


@pytest.fixture(scope="module")
def stack():
    reason = missing_binaries() or (None if HAPROXY else "HAProxy is not installed (apt-get install haproxy)")
    require(reason is None, f"the two-node tests start their own services: {reason}")
    with running(TwoNodes()) as stack:
        yield stack


@pytest.fixture(scope="module")
def ids(stack):
    return stack.probe("ids")


def client(stack, username: str, node: str | None = None) -> requests.Session:
    """An API client of ``username`` (token), through the proxy; to the node named, if any."""
    session = requests.Session()
    session.headers.update({"Authorization": f"Token {stack.probe('token', username)['token']}", "If-Match": "*"})
    if node:
        session.headers["X-Node"] = node
    return session


def runs(stack) -> list[dict]:
    """The scores recomputations the workers recorded, each with its process and end (None: running)."""
    found, open_ = [], {}
    for line in stack.runs_log.read_text().splitlines() if stack.runs_log.exists() else []:
        event = json.loads(line)
        if event["event"] == "start":
            open_[event["pid"]] = {"pid": event["pid"], "ids": event["ids"], "start": event["at"], "end": None}
            found.append(open_[event["pid"]])
        else:
            open_.pop(event["pid"])["end"] = event["at"]
    return found


def overlapping(recorded: list[dict]) -> list:
    """Pairs of runs of the same recomputation (the same ids) that ran at the same time."""
    return [
        (a, b)
        for i, a in enumerate(recorded)
        for b in recorded[i + 1 :]
        if a["ids"] == b["ids"] and a["start"] < (b["end"] or float("inf")) and b["start"] < (a["end"] or float("inf"))
    ]


def score_current(stack, session, annotation: int, timeout: float = 60) -> dict:
    """The annotation's score, once the API says it is current."""
    url = stack.url(f"/api/annotations/{annotation}/score/")
    return wait_for(
        lambda: (score := session.get(url, timeout=10).json())["current"] and score,
        timeout,
        f"annotation {annotation} scored",
    )


def test_no_lost_update_across_nodes(stack, ids):
    """Two editors read the pyramid on different nodes and change the same SCU at once with the
    revision they read: one change is applied, the other is refused with 409 and what changed;
    nothing is overwritten unseen, and either node then serves the new revision."""
    editors = {"a": client(stack, "admin", "a"), "b": client(stack, "coordinator", "b")}
    document = stack.url(f"/api/pyramids/{ids['pyramid']}/full/")
    read = {node: editor.get(document, timeout=30) for node, editor in editors.items()}
    assert {node: served_by(r) for node, r in read.items()} == {"a": "a", "b": "b"}
    assert read["a"].headers["ETag"] == read["b"].headers["ETag"]
    scu = stack.url(f"/api/scus/{ids['scus']['2']}/")
    answers = dict(
        zip(
            NODES,
            together(
                *[
                    lambda node=node: editors[node].patch(
                        scu,
                        json={"label": f"Relabelled on node {node}"},
                        timeout=30,
                        headers={"If-Match": read[node].headers["ETag"]},
                    )
                    for node in NODES
                ]
            ),
            strict=True,
        )
    )
    assert sorted(r.status_code for r in answers.values()) == [200, 409], {n: r.text for n, r in answers.items()}
    winner, loser = sorted(NODES, key=lambda node: answers[node].status_code)
    refused = answers[loser].json()
    assert f'"{refused["revision"]}"' == answers[winner].headers["ETag"]
    assert refused["changes"][0]["summary"] == f"Relabelled SCU 2 “Relabelled on node {winner}”"
    for node in NODES:  # both nodes serve the winner's revision and label
        again = editors[node].get(scu, timeout=30)
        assert (
            again.headers["ETag"] == answers[winner].headers["ETag"]
            and again.json()["label"] == f"Relabelled on node {winner}"
        )
    retried = editors[loser].patch(
        scu, json={"label": f"Relabelled on node {loser}"}, headers={"If-Match": again.headers["ETag"]}, timeout=30
    )
    assert retried.status_code == 200
    assert editors[winner].get(scu, timeout=30).json()["label"] == f"Relabelled on node {loser}"


def test_a_session_and_its_csrf_token_work_on_either_node(stack):
    """Logged in through node a, the browser's session and CSRF token are accepted by node b
    (sessions in the database, one SECRET_KEY), and a logout on b ends the session on a too."""
    browser, login = requests.Session(), stack.url("/accounts/login/")
    on = {node: {"X-Node": node} for node in NODES}
    assert served_by(browser.get(login, headers=on["a"], timeout=30)) == "a"
    logged_in = browser.post(
        login,
        data={
            "username": "coordinator",
            "password": "demo-coordinator",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        },
        headers={**on["a"], "Referer": login},
        allow_redirects=False,
        timeout=30,
    )
    assert logged_in.status_code == 302 and served_by(logged_in) == "a", logged_in.text[:500]
    home = browser.get(stack.url("/"), headers=on["b"], allow_redirects=False, timeout=30)
    assert home.status_code == 200 and served_by(home) == "b"
    token_url = stack.url("/api/auth/token/")
    forged = browser.post(token_url, headers=on["b"], timeout=30)  # a session's POST without its CSRF token
    assert forged.status_code == 403 and "CSRF" in forged.json()["detail"]
    token = browser.post(token_url, headers={**on["b"], "X-CSRFToken": browser.cookies["csrftoken"]}, timeout=30)
    assert token.status_code in (200, 201) and served_by(token) == "b"
    assert token.json()["token"] == stack.probe("token", "coordinator")["token"]
    logout = browser.post(
        stack.url("/accounts/logout/"),
        data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        headers={**on["b"], "Referer": login},
        allow_redirects=False,
        timeout=30,
    )
    assert logout.status_code == 302 and served_by(logout) == "b"
    assert (
        browser.get(stack.url("/"), headers=on["a"], allow_redirects=False, timeout=30).status_code == 302
    )  # to the login page


def guess(stack, session, node, username, password, **headers) -> requests.Response:
    answer = session.post(
        stack.url("/api/auth/token/"),
        json={"username": username, "password": password},
        headers={"X-Node": node, **headers},
        timeout=30,
    )
    assert served_by(answer) == node
    return answer


def test_wrong_passwords_spread_over_both_nodes_lock_the_user_out(stack):
    """10 wrong passwords for alice, each from another address, alternately on each node (5 each:
    neither node alone reaches the limit) lock her out on both, even with the right password."""
    answers = [guess(stack, session_from(f"127.0.3.{i}"), NODES[i % 2], "alice", f"guess-{i}") for i in range(1, 11)]
    assert [a.status_code for a in answers] == [400] * 9 + [429]
    for i, node in enumerate(NODES):
        locked = guess(stack, session_from(f"127.0.3.{20 + i}"), node, "alice", "demo-alice")
        assert locked.status_code == 429 and "Too many failed logins" in locked.text


def test_two_clients_behind_the_proxy_never_lock_each_other_out(stack):
    """Behind the proxy every request comes from its address: the app tells clients apart by the
    address HAProxy appends to X-Forwarded-For (TRUSTED_PROXY_COUNT=1). A client guessing passwords
    on both nodes, naming a new address of its own in X-Forwarded-For each time, is locked out after
    10 failures counted across the nodes; another client's logins keep working meanwhile."""
    mallory, bob = session_from("127.0.4.1"), session_from("127.0.4.2")
    answers = [
        guess(stack, mallory, NODES[i % 2], f"nobody{i}", "guess", **{"X-Forwarded-For": f"203.0.113.{i}"})
        for i in range(10)
    ]
    assert [a.status_code for a in answers] == [400] * 9 + [429]
    assert guess(stack, mallory, "b", "bob", "demo-bob").status_code == 429  # the address is locked, whatever the user
    for node in NODES:
        assert guess(stack, bob, node, "bob", "demo-bob").status_code in (200, 201)


def test_the_token_throttle_counts_across_nodes_per_client(stack):
    """10 token requests a minute per client address (TOKEN_RATE), counted in Redis: spread over
    both nodes, the 11th is throttled; another client behind the same proxy is not."""
    script, other = session_from("127.0.5.1"), session_from("127.0.5.2")
    answers = [guess(stack, script, NODES[i % 2], "bob", "demo-bob") for i in range(11)]
    assert [a.status_code for a in answers[:10]] == [200] * 10, [a.text for a in answers]
    assert answers[10].status_code == 429 and "throttled" in answers[10].json()["detail"]
    assert guess(stack, other, "a", "bob", "demo-bob").status_code == 200


def test_each_workers_prepared_pyramid_is_never_older_than_the_database(stack, ids):
    """Each scores worker keeps prepared pyramids in its memory. Both score bob's annotations with
    a new SCU of weight 1; then another reference's contributor raises its weight to 2 (through the
    other node): every stored score must be the fresh computation's, and bob's does change."""
    admin, bob = client(stack, "admin", "a"), client(stack, "bob", "b")
    annotation = ids["annotations"]["bob:1"]
    first, second = sorted(ids["references"])[:2]
    scu = admin.post(
        stack.url("/api/scus/"),
        json={
            "pyramid": ids["pyramid"],
            "label": "Kept in memory",
            "reference": ids["references"][first],
            "parts": [{"start": 0, "end": 4}],
        },
        timeout=30,
    )
    assert scu.status_code == 201, scu.text
    since = time.time()
    assert (
        bob.post(
            stack.url("/api/matches/"),
            json={"annotation": annotation, "scu": scu.json()["id"], "parts": [{"start": 0, "end": 4}]},
            timeout=30,
        ).status_code
        == 201
    )
    score_current(stack, bob, annotation)
    for _ in range(8):  # annotation edits until both workers have scored with this pyramid's revision
        if len({run["pid"] for run in runs(stack) if run["start"] > since}) == 2:
            break
        bob.post(
            stack.url("/api/matches/"),
            json={"annotation": annotation, "scu": None, "parts": [{"start": 0, "end": 3}]},
            timeout=30,
        )
        score_current(stack, bob, annotation)
    assert len({run["pid"] for run in runs(stack) if run["start"] > since}) == 2
    before = bob.get(stack.url(f"/api/annotations/{annotation}/score/"), timeout=30).json()
    raised = client(stack, "admin", "b").post(
        stack.url("/api/contributors/"),
        timeout=30,
        json={"scu": scu.json()["id"], "reference": ids["references"][second], "parts": [{"start": 0, "end": 4}]},
    )
    assert raised.status_code == 201, raised.text
    after = score_current(stack, bob, annotation)
    assert stack.current(60)["mismatches"] == []
    assert after != before


def test_a_recomputation_never_runs_twice_at_once_on_two_workers(stack, ids):
    """The same recomputation requested twice while the first copy runs on one worker: the other
    worker finds it running (jobs/task_lock.py), retries, and runs it after (never alongside)."""
    annotation, since = ids["annotations"]["bob:2"], time.time()
    broker = Celery(broker=stack.env["REDIS_URL"])
    broker.send_task("annotation.recompute_scores", args=[[annotation]], queue="celery")

    def mine():
        return [run for run in runs(stack) if run["ids"] == [annotation] and run["start"] > since]

    wait_for(lambda: any(run["end"] is None for run in mine()), 30, "the first copy running")
    broker.send_task("annotation.recompute_scores", args=[[annotation]], queue="celery")
    wait_for(lambda: len([run for run in mine() if run["end"]]) >= 2, 60, "both copies done")
    copies = mine()
    assert len(copies) == 2 and not overlapping(copies), copies
    retried = "".join((stack.root / f"scores{i}.log").read_text() for i in (1, 2))
    assert re.search(r"annotation\.recompute_scores\[[0-9a-f-]+\] retry: Retry in 2s", retried), retried[-3000:]
    assert not overlapping(runs(stack))  # nor did any other recomputation run twice at once


def save_until_acknowledged(stack, session, payload, failures: list) -> requests.Response:
    """One save with its Idempotency-Key, sent again (same key) until acknowledged."""
    key = str(uuid.uuid4())
    for _ in range(40):
        try:
            answer = session.post(
                stack.url("/api/matches/"), json=payload, headers={"Idempotency-Key": key}, timeout=30
            )
            if answer.status_code == 201:
                return answer
            failures.append(answer.status_code)
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as error:
            # refused, reset, or the answer cut off after its headers (the node killed while sending
            # it): whether the save was stored is unknown, so it is sent again with its key
            failures.append(type(error).__name__)
        time.sleep(0.25)
    raise AssertionError(f"never acknowledged: {failures[-5:]}")


def saves_while(stack, ids, action, clients: int = 3, each: int = 8) -> tuple[list, list]:
    """``clients`` editors saving ``each`` matches through the proxy; ``action`` runs once a few are
    acknowledged. The acknowledged answers, and the failures the clients saw (then retried)."""
    acknowledged, failures, lock = [], [], threading.Lock()
    payload = {"annotation": ids["annotations"]["bob:1"], "scu": None, "parts": [{"start": 0, "end": 3}]}

    def editor():
        session = client(stack, "bob")
        for _ in range(each):
            answer = save_until_acknowledged(stack, session, payload, failures)
            with lock:
                acknowledged.append(answer)

    threads = [threading.Thread(target=editor) for _ in range(clients)]
    for t in threads:
        t.start()
    wait_for(lambda: len(acknowledged) >= clients, 60, "the first saves")
    action()
    for t in threads:
        t.join(120)
    return acknowledged, failures


def matches(stack) -> int:
    return stack.postgres.sql("SELECT count(*) FROM annotation_peermatch")[0][0]


def assert_all_stored_once(stack, before: int, acknowledged: list):
    created = {answer.json()["id"] for answer in acknowledged}
    assert len(created) == len(acknowledged)
    stored = stack.postgres.sql(
        f"SELECT count(*) FROM annotation_peermatch WHERE id IN ({','.join(map(str, created))})"
    )
    assert stored == [(len(created),)]  # nothing acknowledged is lost
    assert matches(stack) == before + len(created)  # and no retry saved twice


def current_within_a_minute(stack, ids, since: float) -> float:
    """Seconds from ``since`` until every score, agreement and dashboard is current and equal to a
    fresh computation (the edited annotation's score watched through the API first: cheaper)."""
    score_current(stack, client(stack, "bob"), ids["annotations"]["bob:1"], timeout=60 - (time.monotonic() - since))
    state = stack.current(max(1.0, 60 - (time.monotonic() - since)))
    took = time.monotonic() - since
    assert took < 60 and state["mismatches"] == [], took
    return took


def test_a_web_node_killed_mid_request(stack, ids):
    """SIGKILL of node a's whole process group while three editors save through the proxy: HAProxy
    sends the rest to node b; a request cut off is answered 502 and retried with its key; every
    acknowledged save is stored once, and every score is current within a minute."""
    before, killed = matches(stack), {}

    def kill():
        stack.nodes["a"].kill()
        killed["at"] = time.monotonic()

    acknowledged, failures = saves_while(stack, ids, kill)
    assert len(acknowledged) == 24
    assert_all_stored_once(stack, before, acknowledged)
    served = [served_by(answer) for answer in acknowledged]
    assert served[-1] == "b" and "a" in served, served
    took = current_within_a_minute(stack, ids, killed["at"])
    print(
        f"web node killed: {len(failures)} failed attempts retried ({sorted(set(map(str, failures)))}); "
        f"everything current {took:.1f} s after the kill"
    )
    stack.nodes["a"].start()
    stack.wait_routed("a", timeout=60)


def test_a_worker_killed_mid_burst(stack, ids):
    """SIGKILL of one scores worker while editors save: the other worker and beat's sweep catch up
    (the killed worker's messages come back after the visibility timeout); every acknowledged save
    is stored once and every score is current within a minute, without restarting it."""
    before, victim, killed = matches(stack), stack.workers[0], {}
    logs = log_ends(stack, "scores1", "scores2", "dashboards")

    def kill():
        victim.kill()
        killed["at"] = time.monotonic()

    acknowledged, failures = saves_while(stack, ids, kill)
    assert failures == [] and len(acknowledged) == 24  # the web nodes never noticed
    assert_all_stored_once(stack, before, acknowledged)
    took = current_within_a_minute(stack, ids, killed["at"])
    # A request that waited for the killed worker's lock (12 s) was dropped after Celery's default
    # 3 retries (6 s) with its ids still marked pending: recovery then rested on the broker's
    # redelivery, or on the sweep a minute later (jobs/task_lock.py, jobs/queue.pending_ttl).
    assert_no_task_given_up(stack, logs)
    print(f"scores worker killed: everything current {took:.1f} s after the kill, the other worker alone")
    victim.start()


def test_beats_sweep_runs_once(stack):
    """One beat sends the sweep every SWEEP_SECONDS (15 s), and each sweep it sends (and each a
    worker sends when it starts) is run by exactly one worker: none lost, none run twice."""
    sending = "Sending due task recompute-stale (annotation.recompute_stale)"
    wait_for(lambda: stack.beat.log.read_text().count(sending) >= 3, 60, "three sweeps sent")
    logs = {name: (stack.root / f"{name}.log").read_text() for name in ("scores1", "scores2", "dashboards", "beat")}
    sent = logs["beat"].count(sending)
    started = sum(len(re.findall(r"\bready\.", logs[name])) for name in ("scores1", "scores2", "dashboards"))

    def sweeps(event):
        return [
            found
            for name in ("scores1", "scores2")
            for found in re.findall(rf"Task annotation\.recompute_stale\[([0-9a-f-]+)\] {event}", logs[name])
        ]

    # A sweep the killed worker had taken comes back to the other one: received twice, run once.
    assert len(sweeps("succeeded")) == len(set(sweeps("succeeded")))
    # (the last one sent, or a restarted worker's, may still be on its way)
    assert sent + started - 2 <= len(set(sweeps("received"))) <= sent + started, (
        sent,
        started,
        len(set(sweeps("received"))),
    )
    # Every SWEEP_SECONDS, never twice in one period (a second beat would halve the gaps).
    stamps = [
        datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f")
        for stamp in re.findall(
            r"^\[([\d-]+ [\d:,]+): INFO/MainProcess\] Scheduler: Sending due task recompute-stale ", logs["beat"], re.M
        )
    ]
    gaps = [(later - earlier).total_seconds() for earlier, later in zip(stamps, stamps[1:], strict=False)]
    assert len(stamps) == sent >= 3 and 14 < min(gaps) and max(gaps) < 30, gaps

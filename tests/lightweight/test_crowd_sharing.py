"""A crowd no address can block or impersonate: workers behind one address (a lab's NAT) are
workers of their own, addresses share a link's slots fairly (one over its share loses its newest
hold to a newcomer when nothing is free), a worker id gets work and answers only with its key, and
every refusal of an answer reads alike. The live test sends real HTTP requests from their own
loopback addresses (127.0.x.y) to a live server on PostgreSQL, as a crowd and an attack would."""
import http.client
import json
import threading
import time
from urllib.parse import urlencode, urlsplit

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import LiteAssignment, LiteReservation, LiteTask, LiteWorkerKey
from annotation.lightweight import work as lightweight_work

from tests.lightweight.test_crowd_submissions import own
from tests.lightweight.test_reservations import expire, judging_link


class Crowd:
    """Requests to the crowd API of a live server from one loopback address (each a connection of its own)."""

    def __init__(self, live_server, token: str, address: str):
        parts = urlsplit(live_server.url)
        self.host, self.port, self.address = parts.hostname, parts.port, address
        self.url = f"/api/crowd/{token}/"

    def _send(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30, source_address=(self.address, 0))
        try:
            data = json.dumps(body) if body is not None else None
            connection.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
            response = connection.getresponse()
            text = response.read().decode()
            return response.status, json.loads(text) if text.startswith("{") else {}
        finally:
            connection.close()

    def get(self, worker: str, key: str = "") -> tuple[int, dict]:
        return self._send("GET", f"{self.url}?{urlencode({'worker': worker, 'key': key})}")

    def answer(self, worker: str, key: str, task: int) -> tuple[int, dict]:
        statements = LiteTask.objects.get(pk=task).statement_ids
        return self._send("POST", self.url, {"worker": worker, "key": key, "task": task,
                                             "answers": {str(pk): "present" for pk in statements}})


def served(crowd: Crowd, workers: list[str]) -> list[tuple[str, str, int | None]]:
    """Each worker asks once, all at once: (worker, key, task or None)."""
    results = [None] * len(workers)

    def ask(i):
        status, body = crowd.get(workers[i])
        results[i] = (workers[i], body.get("key", ""), body.get("task") if status == 200 else None)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.postgres
def test_a_lab_behind_one_address_is_served_and_thirty_attacking_addresses_keep_no_newcomer_out(live_server, transactional_db):
    """Issue 31's run: 3-4 workers on one machine each got a task no other could judge and then "no
    more tasks"; a lab of 10 behind one address got 3 tasks of a 4-task run; 211 requests from 29
    addresses held all 264 slots of a run, and a new worker was told to come back in 866 s."""
    # A 4-task run (12 slots): a lab of 10 behind one address is served, and its answers all count.
    small = judging_link(peers=4, judges=3)
    lab = Crowd(live_server, small.token, "127.0.7.10")
    held = served(lab, [f"lab{i}" for i in range(10)])
    assert all(task is not None for _, _, task in held), held
    assert sorted(lab.answer(w, key, task)[0] for w, key, task in held) == [201] * 10
    answers = LiteAssignment.objects.filter(task__pyramid=small.pyramid)
    assert answers.count() == 10 and set(answers.values_list("client", flat=True)) == {"127.0.7.10"}
    assert max(answers.filter(task=t).count() for t in answers.values_list("task", flat=True)) == 3   # tasks shared

    small.pyramid.dataset.delete()

    # A run of 264 slots: 30 workers behind one address, alone, all get tasks.
    big = judging_link(peers=88, judges=3)
    big.pyramid.refresh_from_db()
    office = Crowd(live_server, big.token, "127.0.7.30")
    assert all(task is not None for _, _, task in served(office, [f"office{i}" for i in range(30)]))
    LiteReservation.objects.filter(task__pyramid=big.pyramid).delete()

    # 30 addresses invent worker ids as fast as they may (CROWD_RATE) until every slot is held, and
    # go on; a genuine worker from a new address then gets a task within 10 s.
    stop, sent = threading.Event(), [0] * 30

    def attack(n):
        crowd = Crowd(live_server, big.token, f"127.0.8.{n + 1}")
        while not stop.is_set():
            crowd.get(f"fake{n}-{sent[n]}")
            sent[n] += 1

    attackers = [threading.Thread(target=attack, args=(n,)) for n in range(30)]
    for thread in attackers:
        thread.start()
    try:
        deadline = time.monotonic() + 60
        live = LiteReservation.objects.filter(task__pyramid=big.pyramid)
        while live.filter(expires_at__gt=timezone.now()).count() < 264 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert live.filter(expires_at__gt=timezone.now()).count() == 264   # the attack holds every slot
        genuine, started, status, body = Crowd(live_server, big.token, "127.0.9.1"), time.monotonic(), None, {}
        while time.monotonic() - started < 10:
            status, body = genuine.get("genuine", body.get("key", ""))
            if "task" in body:
                break
            time.sleep(0.5)
        waited = time.monotonic() - started
    finally:
        stop.set()
        for thread in attackers:
            thread.join()
    assert status == 200 and "task" in body and waited < 10, (status, body, waited)
    assert genuine.answer("genuine", body["key"], body["task"])[0] == 201
    assert sum(sent) > 264   # the attackers went on asking

"""A crowd no address can block or impersonate: workers behind one address (a lab's NAT) are
workers of their own, addresses share a link's slots fairly (one over its share loses its newest
hold to a newcomer when nothing is free), a worker id gets work and answers only with its key, and
every refusal of an answer reads alike. The live test sends real HTTP requests from their own
loopback addresses (127.0.x.y) to a live server on PostgreSQL, as a crowd and an attack would."""

import http.client
import json
import re
import threading
import time
from urllib.parse import urlencode, urlsplit

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.lightweight import work
from annotation.lightweight.models import LiteAssignment, LiteReservation, LiteTask, LiteWorkerKey

from tests.lightweight.test_crowd_submissions import own
from tests.lightweight.test_reservations import judging_link


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
        return self._send(
            "POST",
            self.url,
            {"worker": worker, "key": key, "task": task, "answers": {str(pk): "present" for pk in statements}},
        )


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
def test_a_lab_behind_one_address_is_served_and_thirty_attacking_addresses_keep_no_newcomer_out(
    live_server, transactional_db
):
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
    assert max(answers.filter(task=t).count() for t in answers.values_list("task", flat=True)) == 3  # tasks shared

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
        assert live.filter(expires_at__gt=timezone.now()).count() == 264  # the attack holds every slot
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
    assert sum(sent) > 264  # the attackers went on asking


# --- a worker id answers only with its key ---------------------------------------------------------


@pytest.mark.django_db
def test_a_worker_id_gets_work_and_answers_only_with_its_key():
    """Anyone who knew a worker id could answer as that worker (201 and a completion code from a
    second address), pulling its agreement below the threshold so all its genuine answers were
    dropped; and "this worker id has answered this task already" told which ids took part."""
    link = judging_link(peers=2, judges=3)
    url = f"/api/crowd/{link.token}/"
    victim = APIClient(REMOTE_ADDR="127.0.0.5")
    shown = victim.get(url, {"worker": "j1"}).data
    task, key = LiteTask.objects.get(pk=shown["task"]), shown["key"]
    assert LiteWorkerKey.objects.get(worker_id="j1").key_hash != key  # stored hashed

    def post(client, worker, key=None, task=task):
        body = {"worker": worker, "task": task.pk, "answers": {pk: "absent" for pk in task.statement_ids}}
        return client.post(url, body if key is None else {**body, "key": key}, format="json")

    impostor = APIClient(REMOTE_ADDR="127.0.0.6")
    keys, holds = (
        list(LiteWorkerKey.objects.values_list("worker_id", "key_hash")),
        list(LiteReservation.objects.values_list()),
    )
    decoys = [impostor.get(url, {"worker": "j1"}).data, impostor.get(url, {"worker": "j1", "key": "guessed"}).data]
    assert all(d["key"] != key and "task" in d for d in decoys)  # no work under j1's id without its key (a decoy's)
    assert list(LiteWorkerKey.objects.values_list("worker_id", "key_hash")) == keys  # and nothing held or stored
    assert list(LiteReservation.objects.values_list()) == holds
    refusals = [
        post(impostor, "j1"),
        post(impostor, "j1", "guessed"),
        post(impostor, "nobody"),
        post(impostor, "j1", decoys[0]["key"]),
    ]
    assert post(victim, "j1", key).status_code == 201  # the worker's own answer
    refusals += [post(impostor, "j1"), post(impostor, "j1", "guessed")]  # answered already, without the key
    other = LiteTask.objects.filter(batch=1).exclude(pk=task.pk).get()
    refusals.append(post(victim, "j1", key, other))  # with the key, but no hold
    assert [r.status_code for r in refusals] == [400] * 7
    assert {str(r.data["detail"][0]) for r in refusals} == {work.NOT_HELD}  # one message, whichever it was
    assert not any("completion_code" in r.data for r in refusals)
    assert list(LiteAssignment.objects.values_list("worker_id", "answers")) == [("j1", "n" * len(task.statement_ids))]
    moved = APIClient(REMOTE_ADDR="127.0.0.7")  # the worker on another network: its key is the worker
    assert moved.get(url, {"worker": "j1", "key": key}).data["task"] == other.pk


@pytest.mark.django_db
def test_a_keyless_client_is_answered_alike_whether_the_worker_id_took_part_or_not():
    """A crowd page asked for a known worker id without its key said the id was "in use in
    another browser", while an unused id got a task: anyone who knew or guessed ids learnt who
    took part. Both now get the same page (a task, a fresh key of the same shape, and the notice
    telling a worker new to this browser to continue in the one it started in); the known id's
    takes no hold, stores no key, shows none of the worker's work and has its answers refused with
    the one refusal, which says the same; the worker keeps its task and its answers count."""
    link = judging_link(peers=3, judges=3)
    url = f"/lightweight/crowd/{link.token}/"

    def browser(worker, address):
        return worker_page(url, worker, address)

    def shape(page, worker):
        """The page with what differs between any two workers' (names, ids, texts, tokens) left out."""
        text = re.sub(
            r'value="[^"]*"|<blockquote[^>]*>.*?</blockquote>|<legend>.*?</legend>',
            "",
            page.content.decode(),
            flags=re.DOTALL,
        )
        return page.status_code, text.replace(worker, "WORKER")

    def numbers():
        return (
            list(LiteReservation.objects.values_list("worker_id", "task_id", "expires_at")),
            list(LiteWorkerKey.objects.values_list("worker_id", "key_hash")),
            list(LiteAssignment.objects.values_list("worker_id", "task_id", "answers")),
            work.progress(link.pyramid),
        )

    j1 = browser("j1", "127.0.0.5")
    answered = task_of(j1.get(url))
    assert j1.post(url, answers(answered)).status_code == 200
    held = task_of(j1.get(url))  # j1: one task answered, one held
    before = numbers()
    probe = browser("j1", "127.0.0.6")
    known = probe.get(url)
    assert numbers() == before  # a keyless client naming j1 changes no number
    unused = browser("j9", "127.0.0.7").get(url)
    assert shape(known, "j1") == shape(unused, "j9")  # and is answered as a worker new to the run
    before = numbers()
    page = known.content.decode()
    assert "0 done" in page and "If you have worked as j1 in another browser before, please continue there" in page
    decoy = probe.cookies["crowd_keys"].value
    shown = task_of(known)
    refused = probe.post(url, answers(shown))
    assert refused.status_code == 400 and work.NOT_HELD in refused.content.decode()
    assert "started in another browser: continue there" in work.NOT_HELD
    again = probe.get(url)  # the decoy's key is kept, as a worker's is
    assert (
        again.status_code == 200
        and "crowd_keys" not in again.cookies
        and "data-key-notice" not in again.content.decode()
    )
    assert probe.cookies["crowd_keys"].value == decoy and numbers()[:3] == before[:3]
    assert task_of(j1.get(url)) == held and j1.post(url, answers(held)).status_code == 200  # the worker's own
    assert LiteAssignment.objects.filter(worker_id="j1").count() == 2


def worker_page(url: str, worker: str, address: str) -> Client:
    """A browser from ``address`` that gave ``worker`` as its id on the crowd page ``url``."""
    client = Client(REMOTE_ADDR=address)
    assert client.post(url, {"worker": worker}).status_code == 302
    return client


@pytest.mark.django_db
def test_a_keyless_client_meets_the_limits_a_new_worker_meets(settings):
    """A keyless client naming a known id is answered as a new worker would be in every case: its
    task is chosen, under the same limits, as a new worker's, and its hold rolled back. Shown a
    task where a new worker would be told its browser holds enough, it told the id took part."""
    settings.CROWD_HOLDS_PER_SESSION = 1
    link = judging_link(peers=3, judges=3)
    url = f"/lightweight/crowd/{link.token}/"
    assert worker_page(url, "j1", "127.0.0.5").get(url).status_code == 200
    holds = list(LiteReservation.objects.values_list())
    pages = {}
    for worker, address in (("j1", "127.0.0.6"), ("j9", "127.0.0.7")):
        client = worker_page(url, f"other-{worker}", address)
        assert client.get(url).status_code == 200  # the browser's one hold
        client.post(f"{url}?change", {"worker": worker})
        pages[worker] = client.get(url)
    assert [page.status_code for page in pages.values()] == [429, 429]
    assert LiteReservation.objects.filter(worker_id__in=["j1", "j9"]).values_list().count() == 1  # j1's own
    assert set(holds) <= set(LiteReservation.objects.values_list())


def task_of(page) -> LiteTask:
    return LiteTask.objects.get(pk=re.search(r'name="task" value="(\d+)"', page.content.decode()).group(1))


def answers(task) -> dict:
    return {"task": task.pk, **{f"a{pk}": "present" for pk in task.statement_ids}}


@pytest.mark.django_db
def test_a_page_asked_again_with_the_stored_key_shows_the_workers_task_and_is_csrf_checked():
    """A browser keeping no cookie (MTurk's frame with third-party cookies blocked) presents no key
    with a page load: the page, given a fresh key, posts itself again with the key the browser
    stored (crowd.js). That post shows the worker's own task, is never answered with a fresh key
    again (no loop), and like every post outside MTurk's frame needs the CSRF token."""
    link = judging_link(peers=2, judges=3)
    url = f"/lightweight/crowd/{link.token}/"
    first = Client(REMOTE_ADDR="127.0.0.5")
    first.post(url, {"worker": "j1"})
    shown = first.get(url)
    held, key = task_of(shown), re.search(r'name="key" value="([^"]+)"', shown.content.decode()).group(1)
    other = Client(REMOTE_ADDR="127.0.0.5", enforce_csrf_checks=True)  # the worker's browser without its cookie
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', other.get(url).content.decode()).group(1)
    assert other.post(url, {"worker": "j1", "csrfmiddlewaretoken": token}).status_code == 302
    fresh = other.get(url).content.decode()
    assert "data-fresh" in fresh and f'value="{key}"' not in fresh
    assert other.post(url, {"key": key, "resume": "1"}).status_code == 403  # no CSRF token
    resumed = other.post(url, {"key": key, "resume": "1", "csrfmiddlewaretoken": token})
    assert resumed.status_code == 200 and task_of(resumed) == held and "data-fresh" not in resumed.content.decode()
    assert list(LiteReservation.objects.values_list("worker_id", "task_id")) == [("j1", held.pk)]  # the one hold
    stale = other.post(url, {"key": "stale", "resume": "1", "csrfmiddlewaretoken": token}).content.decode()
    assert "data-fresh" not in stale  # a key no longer valid: a new one, never asked again
    answered = other.post(url, {**answers(held), "key": key, "csrfmiddlewaretoken": token})
    assert answered.status_code == 200 and LiteAssignment.objects.filter(worker_id="j1", task=held).exists()


# --- addresses share the slots fairly --------------------------------------------------------------


@pytest.mark.django_db
def test_an_address_over_its_fair_share_loses_its_newest_hold_to_a_newcomer():
    link = judging_link(peers=2, judges=3)  # batch 1: 2 tasks, 6 slots
    crowded, single = work.CrowdClient("127.0.0.40"), work.CrowdClient("127.0.0.41")
    held = [work.next_task(link, f"lab{i}", crowded) for i in range(5)]
    assert None not in held  # alone, an address takes every free slot
    assert work.next_task(link, "one", single) is not None  # the last free one
    newest = LiteReservation.objects.filter(client="127.0.0.40").latest("created_at", "id")
    # No slot is free: a newcomer's fair share is 6 // 3 addresses = 2; the lab holds 5, so its
    # newest hold is taken over; the address holding one (within its share) keeps it.
    taken = work.next_task(link, "newcomer", work.CrowdClient("127.0.0.42"))
    assert taken is not None and taken.pk == newest.task_id
    newest.refresh_from_db()
    assert newest.expires_at <= timezone.now()

    def live():
        return sorted(LiteReservation.objects.filter(expires_at__gt=timezone.now()).values_list("client", flat=True))

    assert live() == ["127.0.0.40"] * 4 + ["127.0.0.41", "127.0.0.42"]
    assert work.fair_share(6, 2) == 2
    # A second worker there takes one more over (its address holds 1 of its 2); a third, none.
    assert work.next_task(link, "newcomer2", work.CrowdClient("127.0.0.42")) is not None
    assert work.next_task(link, "newcomer3", work.CrowdClient("127.0.0.42")) is None
    assert live() == ["127.0.0.40"] * 3 + ["127.0.0.41"] + ["127.0.0.42"] * 2
    # The worker whose hold was taken over may still answer late (the work was done).
    work.submit_judgments(
        link,
        newest.task_id,
        newest.worker_id,
        {pk: "present" for pk in LiteTask.objects.get(pk=newest.task_id).statement_ids},
        own(newest.worker_id, link.pyramid),
    )
    assert LiteAssignment.objects.filter(worker_id=newest.worker_id).exists()


# --- the address behind a proxy, or not ------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("proxies", [[], ["127.0.0.9"]])
def test_crowd_holds_count_forwarded_for_only_from_a_trusted_proxy(settings, proxies):
    """TRUSTED_PROXY_COUNT=1 on a node reached directly: 30 of 30 holds came from 30 addresses named
    in X-Forwarded-For. From a named proxy the forwarded address counts; from anywhere else (or with
    no proxy named) the connection's."""
    from annotation.api import client_address

    client_address._trusted_networks.cache_clear()
    settings.TRUSTED_PROXY_COUNT, settings.TRUSTED_PROXIES = 1, proxies
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}  # as settings.py sets it from the count
    link = judging_link(peers=30, judges=1)
    url = f"/api/crowd/{link.token}/"
    for i in range(5):
        APIClient(REMOTE_ADDR="127.0.0.8").get(url, {"worker": f"direct{i}"}, HTTP_X_FORWARDED_FOR=f"10.0.0.{i}")
        APIClient(REMOTE_ADDR="127.0.0.9").get(
            url, {"worker": f"proxied{i}"}, HTTP_X_FORWARDED_FOR=f"6.6.6.6, 10.1.0.{i}"
        )
    clients = dict(LiteReservation.objects.values_list("worker_id", "client"))
    assert {clients[f"direct{i}"] for i in range(5)} == {"127.0.0.8"}
    assert {clients[f"proxied{i}"] for i in range(5)} == (
        {f"10.1.0.{i}" for i in range(5)} if proxies else {"127.0.0.9"}
    )

"""Crowd submissions on the judging page under retries and concurrency, on real PostgreSQL:
every answer is stored once, none is lost, and a crowd arriving together spreads over the tasks."""

import hashlib
import re
import threading

import pytest
from django.db import connection
from django.test import Client

from annotation.corpus.models import PeerSummary
from annotation.lightweight import scores, work
from annotation.lightweight.models import CrowdLink, LightweightPyramid, LiteAssignment, LiteTask, LiteWorkerKey

from tests.foundation.factories import topic

PEERS = 12


@pytest.fixture
def link(db):
    """A judging link over one batch of PEERS tasks (one per peer), two statements each."""
    t, refs = topic("D1", "Storms", A="The storm hit the coast on Monday.", B="Ten boats sank in the harbour.")
    for p in range(PEERS):
        PeerSummary.objects.create(topic=t, external_id=f"D1.M.100.A.{p}", text=f"Peer {p}: a storm hit the coast.")
    run = LightweightPyramid.objects.create(
        dataset=t.dataset,
        name="crowd",
        statements_per_writer=2,
        writers_per_reference=1,
        statements_per_reference=1,
        judges_per_task=3,
    )
    work.submit_writing(run, refs["A"], "w1", ["The storm hit the coast", "It happened on a Monday"], own("w1", run))
    work.submit_writing(
        run, refs["B"], "w2", ["Ten boats sank in the harbour", "The boats were in a harbour"], own("w2", run)
    )
    work.sample(run)
    assert work.create_tasks(run) == 2 * PEERS
    return CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING, batch=1)


def own(worker: str, run=None) -> work.CrowdClient:
    """A client of this worker's own (an address no other worker shares), with the worker's key in
    ``run`` (``lightweight_work.worker_key``; set to a known one, as if issued to this client)."""
    key = ""
    if run is not None:
        key = f"key of {worker}"
        LiteWorkerKey.objects.update_or_create(
            pyramid_id=getattr(run, "pk", run),
            worker_id=worker,
            defaults={"key_hash": hashlib.sha256(key.encode()).hexdigest()},
        )
    return work.CrowdClient(f"client of {worker}", key=key)


def worker_client(link, worker: str, address: str = "127.0.0.1") -> tuple[Client, str]:
    client, url = Client(REMOTE_ADDR=address), f"/lightweight/crowd/{link.token}/"
    assert client.post(url, {"worker": worker}).status_code == 302
    return client, url


def shown_task(client: Client, url: str) -> LiteTask:
    """The task the judging page shows this client (and holds for its worker)."""
    return LiteTask.objects.get(pk=re.search(r'name="task" value="(\d+)"', client.get(url).content.decode()).group(1))


def answers_for(task) -> dict:
    return {"task": task.pk, **{f"a{pk}": "present" for pk in task.statement_ids}}


def code(response) -> str:
    """The completion code the page shows (not ``response.context``: the test client's template
    signal mixes contexts across threads)."""
    return re.search(r"data-completion-code>([0-9A-F]{8})<", response.content.decode()).group(1)


def at_once(calls) -> list:
    """Run the calls in threads released together (each thread its own database connection)."""
    barrier, results = threading.Barrier(len(calls)), [None] * len(calls)

    def run(i, call):
        try:
            barrier.wait()
            results[i] = call()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.django_db
def test_a_submission_retried_twice_is_stored_once_with_one_code(link):
    client, url = worker_client(link, "j1")
    task = shown_task(client, url)
    revision = LightweightPyramid.objects.get(pk=link.pyramid_id).revision
    responses = [client.post(url, answers_for(task)) for _ in range(3)]  # the submission and two retries
    assert [r.status_code for r in responses] == [200, 200, 200]
    assert len({code(r) for r in responses}) == 1
    assert LiteAssignment.objects.filter(task=task, worker_id="j1").count() == 1
    assert LightweightPyramid.objects.get(pk=link.pyramid_id).revision == revision + 1  # the retries changed nothing


@pytest.mark.postgres
def test_concurrent_retries_of_one_submission_store_it_once(link, transactional_db):
    """A double click and a retry arriving together: the constraint decides, all get the one code."""
    clients = [worker_client(link, "j1") for _ in range(4)]  # e.g. the worker's tabs, one session each
    task = shown_task(*clients[0])
    for client, _ in clients[1:]:  # the browser's key of the worker, which every tab sends
        client.cookies["crowd_keys"] = clients[0][0].cookies["crowd_keys"].value
    responses = at_once([lambda c=c, u=u: c.post(u, answers_for(task)) for c, u in clients])
    assert [r.status_code for r in responses] == [200] * 4
    stored = LiteAssignment.objects.get(task=task, worker_id="j1")
    assert {code(r) for r in responses} == {stored.completion_code}


@pytest.mark.postgres
def test_concurrent_submissions_of_different_workers_are_all_stored(link, transactional_db):
    workers = [f"j{i}" for i in range(16)]
    sessions = {w: worker_client(link, w, f"127.0.0.{i + 2}") for i, w in enumerate(workers)}
    tasks = {w: shown_task(*sessions[w]) for w in workers}
    revision = LightweightPyramid.objects.get(pk=link.pyramid_id).revision
    responses = at_once([lambda w=w: sessions[w][0].post(sessions[w][1], answers_for(tasks[w])) for w in workers])
    assert [r.status_code for r in responses] == [200] * len(workers)
    stored = {
        (a.worker_id, a.task_id): a.completion_code for a in LiteAssignment.objects.filter(task__pyramid=link.pyramid)
    }
    assert stored == {(w, tasks[w].pk): code(r) for w, r in zip(workers, responses, strict=True)}
    assert all(a == "pp" for a in LiteAssignment.objects.values_list("answers", flat=True))
    assert LightweightPyramid.objects.get(pk=link.pyramid_id).revision == revision + len(workers)  # no update lost


@pytest.mark.django_db
def test_a_task_is_completed_before_the_next_is_started_so_workers_have_pairs(link):
    """Spreading each worker over its own tasks left 3 workers of 3-judge tasks with no task in
    common: no pair, no agreement, no worker filter. Workers arriving one after another now join
    the most advanced task; a reload keeps the task; those judged are judged by all three."""
    workers = ["j1", "j2", "j3"]
    shown = {w: work.next_task(link, w, own(w)).pk for w in workers}
    assert len(set(shown.values())) == 1  # all three on one task, 3 judges asked
    assert all(work.next_task(link, w, own(w)).pk == pk for w, pk in shown.items())
    judged = {w: [] for w in workers}
    for round_ in range(4):
        for w in workers if round_ % 2 else reversed(workers):  # in turns, in changing order
            task = work.next_task(link, w, own(w))
            work.submit_judgments(
                link,
                task,
                w,
                {pk: "present" if (task.pk + round_) % 3 else "absent" for pk in task.statement_ids},
                own(w, link.pyramid),
            )
            judged[w].append(task.pk)
    assert judged["j1"] == judged["j2"] == judged["j3"] and len(set(judged["j1"])) == 4
    by_task = {}
    for task, worker in LiteAssignment.objects.filter(task__pyramid=link.pyramid).values_list("task_id", "worker_id"):
        by_task.setdefault(task, set()).add(worker)
    assert list(by_task.values()) == [set(workers)] * 4  # no task half judged
    scored = {row["worker"]: row for row in scores.rows(scores.compute(link.pyramid), "worker")}
    assert all(scored[w]["pairs"] == 8 and scored[w]["agreement"] == 1.0 for w in workers)


@pytest.mark.postgres
def test_a_crowd_arriving_together_still_spreads_over_the_tasks(link, transactional_db):
    """Completing tasks first must not send a crowd arriving at once to queue for one task: with
    nothing started, each worker's own order spreads them (no task gets more than its judges)."""
    tasks = at_once([lambda w=w: work.next_task(link, w, own(w)) for w in (f"j{i}" for i in range(PEERS))])
    assert None not in tasks
    held = [t.pk for t in tasks]
    assert max(held.count(pk) for pk in held) <= 3 and len(set(held)) >= PEERS // 3

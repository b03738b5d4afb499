"""Crowd submissions on the judging page under retries and concurrency, on real PostgreSQL:
every answer is stored once, none is lost, and a crowd arriving together spreads over the tasks."""
import re
import threading

import pytest
from django.db import connection
from django.test import Client

from annotation.models import CrowdLink, LightweightPyramid, LiteAssignment, PeerSummary
from annotation.services import lightweight_work

from ..foundation.factories import topic

PEERS = 12


@pytest.fixture
def link(db):
    """A judging link over one batch of PEERS tasks (one per peer), two statements each."""
    t, refs = topic("D1", "Storms", A="The storm hit the coast on Monday.", B="Ten boats sank in the harbour.")
    for p in range(PEERS):
        PeerSummary.objects.create(topic=t, external_id=f"D1.M.100.A.{p}", text=f"Peer {p}: a storm hit the coast.")
    run = LightweightPyramid.objects.create(dataset=t.dataset, name="crowd", statements_per_writer=2,
                                            writers_per_reference=1, statements_per_reference=1, judges_per_task=3)
    lightweight_work.submit_writing(run, refs["A"], "w1", ["The storm hit the coast", "It happened on a Monday"])
    lightweight_work.submit_writing(run, refs["B"], "w2", ["Ten boats sank in the harbour", "The boats were in a harbour"])
    lightweight_work.sample(run)
    assert lightweight_work.create_tasks(run) == 2 * PEERS
    return CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING, batch=1)


def worker_client(link, worker: str) -> tuple[Client, str]:
    client, url = Client(), f"/lightweight/crowd/{link.token}/"
    assert client.post(url, {"worker": worker}).status_code == 302
    return client, url


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
    client.get(url)
    task = lightweight_work.next_task(link, "j1")
    revision = LightweightPyramid.objects.get(pk=link.pyramid_id).revision
    responses = [client.post(url, answers_for(task)) for _ in range(3)]   # the submission and two retries
    assert [r.status_code for r in responses] == [200, 200, 200]
    assert len({code(r) for r in responses}) == 1
    assert LiteAssignment.objects.filter(task=task, worker_id="j1").count() == 1
    assert LightweightPyramid.objects.get(pk=link.pyramid_id).revision == revision + 1   # the retries changed nothing


@pytest.mark.postgres
def test_concurrent_retries_of_one_submission_store_it_once(link, transactional_db):
    """A double click and a retry arriving together: the constraint decides, all get the one code."""
    task = lightweight_work.next_task(link, "j1")
    clients = [worker_client(link, "j1") for _ in range(4)]   # e.g. the worker's tabs, one session each
    responses = at_once([lambda c=c, u=u: c.post(u, answers_for(task)) for c, u in clients])
    assert [r.status_code for r in responses] == [200] * 4
    stored = LiteAssignment.objects.get(task=task, worker_id="j1")
    assert {code(r) for r in responses} == {stored.completion_code}


@pytest.mark.postgres
def test_concurrent_submissions_of_different_workers_are_all_stored(link, transactional_db):
    workers = [f"j{i}" for i in range(16)]
    sessions = {w: worker_client(link, w) for w in workers}
    tasks = {w: lightweight_work.next_task(link, w) for w in workers}
    revision = LightweightPyramid.objects.get(pk=link.pyramid_id).revision
    responses = at_once([lambda w=w: sessions[w][0].post(sessions[w][1], answers_for(tasks[w])) for w in workers])
    assert [r.status_code for r in responses] == [200] * len(workers)
    stored = {(a.worker_id, a.task_id): a.completion_code for a in LiteAssignment.objects.filter(task__pyramid=link.pyramid)}
    assert stored == {(w, tasks[w].pk): code(r) for w, r in zip(workers, responses)}
    assert all(a == "pp" for a in LiteAssignment.objects.values_list("answers", flat=True))
    assert LightweightPyramid.objects.get(pk=link.pyramid_id).revision == revision + len(workers)   # no update lost


@pytest.mark.django_db
def test_a_crowd_arriving_together_spreads_over_the_tasks(link):
    """Before any answer every task is equally short of judges: workers must not all get the same one
    (each holds its task, so the next worker sees it as taken), and a worker who reloads keeps its task."""
    shown = {w: lightweight_work.next_task(link, w).pk for w in (f"j{i}" for i in range(PEERS))}
    assert len(set(shown.values())) == PEERS
    assert all(lightweight_work.next_task(link, w).pk == pk for w, pk in shown.items())
    # the fewest answers and holds still come first: once every other task has an answer, the one
    # left is next for a newcomer (the others keep the tasks they hold)
    first = shown["j0"]
    for task in link.pyramid.tasks.filter(batch=1).exclude(pk=first):
        LiteAssignment.objects.create(task=task, worker_id="x", external_id="app:x", answers="pp")
    assert lightweight_work.next_task(link, "newcomer").pk == first
    assert all(lightweight_work.next_task(link, w).pk == pk for w, pk in shown.items())

"""What one crowd request costs the database: the judging page and its submission are what a crowd
sends hundreds of times a minute (issue 22: at most 5 ms of app + database CPU each), so their
statements are bounded here, and what was folded into fewer statements still shows and stores
the same things."""
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import CrowdLink, LightweightPyramid, LiteAssignment, LiteReservation, LiteStatement, LiteTask

from tests.lightweight.test_crowd_submissions import answers_for, worker_client
from tests.lightweight.world import small_run

pytestmark = pytest.mark.django_db

# Before the task shown was read in one statement: 12 per page (a new hold), 10 per submission.
PAGE_STATEMENTS = 10
SUBMIT_STATEMENTS = 9


@pytest.fixture
def link():
    return CrowdLink.objects.create(pyramid=small_run(peers=2), kind=CrowdLink.Kind.JUDGING, batch=1)


def _page(client: Client, url: str) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as queries:
        page = client.get(url)
    assert page.status_code == 200
    return page.content.decode(), len(queries)


def test_the_judging_page_shows_its_task_in_a_bounded_number_of_statements(link):
    client, url = worker_client(link, "j1")
    page, statements = _page(client, url)
    assert statements <= PAGE_STATEMENTS
    task = LiteTask.objects.get(pk=re.search(r'name="task" value="(\d+)"', page).group(1))
    assert LiteReservation.objects.filter(task=task, worker_id="j1").exists()   # the hold was taken
    assert task.peer.text in page and "0 done" in page
    texts = dict(LiteStatement.objects.filter(pk__in=task.statement_ids).values_list("pk", "text"))
    shown = re.findall(r'<legend>(.*?)</legend>', page)
    assert shown == [texts[pk] for pk in task.statement_ids]   # every statement, in the task's order
    assert [int(n) for n in re.findall(r'name="a(\d+)"', page)[::2]] == task.statement_ids
    again, statements = _page(client, url)   # a reload: the same task, its hold renewed
    assert statements <= PAGE_STATEMENTS and f'name="task" value="{task.pk}"' in again


def test_a_submission_is_stored_once_in_a_bounded_number_of_statements(link):
    client, url = worker_client(link, "j1")
    page, _ = _page(client, url)
    task = LiteTask.objects.get(pk=re.search(r'name="task" value="(\d+)"', page).group(1))
    with CaptureQueriesContext(connection) as queries:
        done = client.post(url, answers_for(task))
    assert done.status_code == 200 and len(queries) <= SUBMIT_STATEMENTS
    stored = LiteAssignment.objects.get(task=task, worker_id="j1")
    assert stored.completion_code in done.content.decode() and stored.answers == "p" * len(task.statement_ids)
    assert not LiteReservation.objects.filter(task=task, worker_id="j1").exists()   # the hold became the answer
    assert client.post(url, answers_for(task)).status_code == 200   # a retry: the same code, nothing twice
    assert LiteAssignment.objects.filter(task=task).count() == 1
    next_page, _ = _page(client, url)
    assert "1 done" in next_page   # the worker's count, read with the next task


def test_a_task_of_another_run_is_not_found_on_the_page_nor_the_api(link):
    mine = LiteTask.objects.filter(pyramid=link.pyramid).first()
    other = LightweightPyramid.objects.create(dataset=link.pyramid.dataset, name="another run")
    foreign = LiteTask.objects.create(pyramid=other, topic=mine.topic, peer=mine.peer, batch=1, key="other",
                                      statement_ids=mine.statement_ids)
    client, url = worker_client(link, "j1")
    _page(client, url)
    assert client.post(url, answers_for(foreign)).status_code == 404
    api = Client().post(f"/api/crowd/{link.token}/", {"worker": "j1", "task": foreign.pk,
                                                       "answers": {str(pk): "present" for pk in foreign.statement_ids}},
                        content_type="application/json")
    assert api.status_code == 404
    assert not LiteAssignment.objects.filter(task=foreign).exists()

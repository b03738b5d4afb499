"""What one crowd request costs the database: the judging page and its submission are what a crowd
sends hundreds of times a minute (issue 22: at most 5 ms of app + database CPU each), so their
statements are bounded here, and what was folded into fewer statements still shows and stores
the same things."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.lightweight.models import (
    CrowdLink,
    LightweightPyramid,
    LiteAssignment,
    LiteReservation,
    LiteStatement,
    LiteTask,
)

from tests.lightweight.test_crowd_submissions import answers_for, worker_client
from tests.lightweight.world import small_run

pytestmark = pytest.mark.django_db

# Before the task shown was read in one statement: 12 per page (a new hold), 10 per submission. A
# new worker's first page also stores its key (one statement); a reload renews nothing.
PAGE_STATEMENTS = 11
RELOAD_STATEMENTS = 5
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
    assert LiteReservation.objects.filter(task=task, worker_id="j1").exists()  # the hold was taken
    assert task.peer.text in page and "0 done" in page
    texts = dict(LiteStatement.objects.filter(pk__in=task.statement_ids).values_list("pk", "text"))
    shown = re.findall(r"<legend>(.*?)</legend>", page)
    assert shown == [texts[pk] for pk in task.statement_ids]  # every statement, in the task's order
    assert [int(n) for n in re.findall(r'name="a(\d+)"', page)[::2]] == task.statement_ids
    again, statements = _page(client, url)  # a reload: the same task, its hold as it was
    assert statements <= RELOAD_STATEMENTS and f'name="task" value="{task.pk}"' in again


def test_a_submission_is_stored_once_in_a_bounded_number_of_statements(link):
    client, url = worker_client(link, "j1")
    page, _ = _page(client, url)
    task = LiteTask.objects.get(pk=re.search(r'name="task" value="(\d+)"', page).group(1))
    with CaptureQueriesContext(connection) as queries:
        done = client.post(url, answers_for(task))
    assert done.status_code == 200 and len(queries) <= SUBMIT_STATEMENTS
    stored = LiteAssignment.objects.get(task=task, worker_id="j1")
    assert stored.completion_code in done.content.decode() and stored.answers == "p" * len(task.statement_ids)
    assert not LiteReservation.objects.filter(task=task, worker_id="j1").exists()  # the hold became the answer
    assert client.post(url, answers_for(task)).status_code == 200  # a retry: the same code, nothing twice
    assert LiteAssignment.objects.filter(task=task).count() == 1
    next_page, _ = _page(client, url)
    assert "1 done" in next_page  # the worker's count, read with the next task


def test_a_task_of_another_run_is_not_found_on_the_page_nor_the_api(link):
    mine = LiteTask.objects.filter(pyramid=link.pyramid).first()
    other = LightweightPyramid.objects.create(dataset=link.pyramid.dataset, name="another run")
    foreign = LiteTask.objects.create(
        pyramid=other, topic=mine.topic, peer=mine.peer, batch=1, key="other", statement_ids=mine.statement_ids
    )
    client, url = worker_client(link, "j1")
    _page(client, url)
    assert client.post(url, answers_for(foreign)).status_code == 404
    api = Client().post(
        f"/api/crowd/{link.token}/",
        {"worker": "j1", "task": foreign.pk, "answers": {str(pk): "present" for pk in foreign.statement_ids}},
        content_type="application/json",
    )
    assert api.status_code == 404
    assert not LiteAssignment.objects.filter(task=foreign).exists()


def test_a_crowd_link_is_read_with_its_run_as_the_orm_reads_them(link):
    """``link_of`` reads the link and its run in one statement written out, converting each value
    as the ORM does (SQLite gives datetimes and decimals as stored): every field as the ORM's."""
    from annotation.lightweight.work import link_of

    run = link.pyramid
    run.workers_pseudonymised_at = run.created_at
    run.save()
    with CaptureQueriesContext(connection) as queries:
        read = link_of(link.token)
    assert len(queries) == 1 and link_of("no-such-token") is None
    orm = CrowdLink.objects.select_related("pyramid").get(pk=link.pk)
    for model, mine, theirs in ((CrowdLink, read, orm), (LightweightPyramid, read.pyramid, orm.pyramid)):
        for field in model._meta.concrete_fields:
            assert getattr(mine, field.attname) == getattr(theirs, field.attname), field.name
            assert type(getattr(mine, field.attname)) is type(getattr(theirs, field.attname)), field.name
    assert not read._state.adding and not read.pyramid._state.adding  # saved as an update, as the ORM's


@pytest.mark.postgres
def test_a_submission_writes_its_answer_holds_and_revision_in_one_statement(link):
    """On PostgreSQL the answer, the removal of its hold and the run's new revision are one
    statement (``queries.store_answer``): two fewer than ``SUBMIT_STATEMENTS``, with the same rows."""
    client, url = worker_client(link, "j1")
    page, _ = _page(client, url)
    task = LiteTask.objects.get(pk=re.search(r'name="task" value="(\d+)"', page).group(1))
    revision = LightweightPyramid.objects.get(pk=link.pyramid_id).revision
    with CaptureQueriesContext(connection) as queries:
        done = client.post(url, answers_for(task))
    assert done.status_code == 200 and len(queries) <= SUBMIT_STATEMENTS - 2
    stored = LiteAssignment.objects.get(task=task, worker_id="j1")
    assert stored.completion_code in done.content.decode() and stored.external_id == "app:j1"
    assert not LiteReservation.objects.filter(task=task, worker_id="j1").exists()
    assert LightweightPyramid.objects.get(pk=link.pyramid_id).revision == revision + 1

"""Judging slots held while a crowd worker reads a task (MTurk's accepted assignments): workers
arriving together get different tasks, a reload keeps the task, an expired hold frees its slot,
an answer takes the slot's place (even late), and a worker with nothing free is told to come back.
The races run on real PostgreSQL, where the task's row lock is what keeps them apart."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.corpus.models import PeerSummary
from annotation.lightweight import queries, work
from annotation.lightweight.models import CrowdLink, LightweightPyramid, LiteAssignment, LiteReservation, LiteTask

from tests.foundation.factories import topic
from tests.lightweight.test_crowd_submissions import at_once, own

RACE_WORKERS = 12


def judging_link(peers: int, judges: int) -> CrowdLink:
    """A judging link over one batch of ``peers`` tasks (one per peer, two statements each)."""
    t, refs = topic("D1", "Storms", A="The storm hit the coast on Monday.", B="Ten boats sank in the harbour.")
    for p in range(peers):
        PeerSummary.objects.create(topic=t, external_id=f"D1.M.100.A.{p}", text=f"Peer {p}: a storm hit the coast.")
    run = LightweightPyramid.objects.create(
        dataset=t.dataset,
        name="crowd",
        statements_per_writer=2,
        writers_per_reference=1,
        statements_per_reference=1,
        judges_per_task=judges,
    )
    work.submit_writing(run, refs["A"], "w1", ["The storm hit the coast", "It happened on a Monday"], own("w1", run))
    work.submit_writing(
        run, refs["B"], "w2", ["Ten boats sank in the harbour", "The boats were in a harbour"], own("w2", run)
    )
    work.sample(run)
    assert work.create_tasks(run) == 2 * peers
    return CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING, batch=1)


def answer(link, task, worker):
    return work.submit_judgments(
        link, task, worker, {pk: "present" for pk in task.statement_ids}, own(worker, link.pyramid)
    )


def expire(ago: float = 1, **holds):
    LiteReservation.objects.filter(**holds).update(expires_at=timezone.now() - timedelta(seconds=ago))


def live_holds(link) -> dict[int, int]:
    """Live holds per task of the link's run."""
    counts: dict[int, int] = {}
    for task in LiteReservation.objects.filter(task__pyramid=link.pyramid, expires_at__gt=timezone.now()).values_list(
        "task_id", flat=True
    ):
        counts[task] = counts.get(task, 0) + 1
    return counts


@pytest.mark.django_db
def test_two_workers_are_given_different_tasks_when_each_needs_one_judge():
    link = judging_link(peers=2, judges=1)
    first, second = work.next_task(link, "j1", own("j1")), work.next_task(link, "j2", own("j2"))
    assert first.pk != second.pk
    assert work.next_task(link, "j3", own("j3")) is None  # both slots held
    assert 290 <= work.seconds_until_free(link, "j3") <= 300  # new workers' holds: CROWD_FIRST_HOLD_SECONDS
    assert work.progress(link.pyramid)["reserved"] == 2


@pytest.mark.django_db
def test_a_reload_shows_the_same_task_and_does_not_renew_its_hold():
    """A reload renewed the hold: a script reloading every 15 minutes kept slots forever, and the
    workers it kept out were told to come back in 866 s, again and again."""
    link = judging_link(peers=4, judges=3)
    task = work.next_task(link, "j1", own("j1"))
    soon = timezone.now() + timedelta(seconds=5)
    LiteReservation.objects.filter(worker_id="j1").update(expires_at=soon)
    assert work.next_task(link, "j1", own("j1")).pk == task.pk
    hold = LiteReservation.objects.get(worker_id="j1")
    assert hold.task_id == task.pk and hold.expires_at == soon


@pytest.mark.django_db
def test_an_unanswered_hold_is_short_and_a_worker_who_answered_holds_longer(settings):
    """A new worker id's hold lasted the full 15 minutes, so invented ids held slots that long
    and a worker kept out was told to come back in 866 s; the first hold is short now, the holds
    of a worker who answered before the full duration (its late answer is taken either way)."""
    link = judging_link(peers=4, judges=1)
    first = work.next_task(link, "j1", own("j1"))
    hold = LiteReservation.objects.get(worker_id="j1", task=first)
    short = hold.expires_at - timezone.now()
    assert settings.CROWD_FIRST_HOLD_SECONDS - 10 < short.total_seconds() <= settings.CROWD_FIRST_HOLD_SECONDS
    answer(link, first, "j1")
    second = work.next_task(link, "j1", own("j1"))
    long = LiteReservation.objects.get(worker_id="j1", task=second).expires_at - timezone.now()
    assert (
        settings.LIGHTWEIGHT_RESERVATION_SECONDS - 10 < long.total_seconds() <= settings.LIGHTWEIGHT_RESERVATION_SECONDS
    )


@pytest.mark.django_db
def test_an_expired_hold_frees_its_slot():
    link = judging_link(peers=1, judges=1)
    task = work.next_task(link, "j1", own("j1"))
    assert work.next_task(link, "j2", own("j2")) is None
    expire(worker_id="j1")
    assert work.progress(link.pyramid)["reserved"] == 0
    assert work.next_task(link, "j2", own("j2")).pk == task.pk
    assert work.next_task(link, "j1", own("j1")) is None  # its slot went to j2 meanwhile
    assert live_holds(link) == {task.pk: 1}
    # j1's own hold came back to it after expiring: the expired row is renewed, not duplicated
    expire(worker_id="j2")
    assert work.next_task(link, "j1", own("j1")).pk == task.pk
    assert LiteReservation.objects.filter(worker_id="j1").count() == 1 and live_holds(link) == {task.pk: 1}


@pytest.mark.django_db
def test_an_answer_takes_the_place_of_its_hold_and_clears_expired_ones(settings):
    link = judging_link(peers=1, judges=3)
    task = work.next_task(link, "j1", own("j1"))
    work.next_task(link, "j2", own("j2"))
    work.next_task(link, "j3", own("j3"))
    expire(worker_id="j2")
    expire(settings.LIGHTWEIGHT_RESERVATION_SECONDS + 1, worker_id="j3")
    answer(link, task, "j1")
    # j1's hold became its answer; j3's, expired past its late answer, is gone; j2 may still answer late
    assert list(LiteReservation.objects.values_list("worker_id", flat=True)) == ["j2"]
    assert work.next_task(link, "j1", own("j1")) is None  # answered: nothing more for j1


@pytest.mark.django_db
def test_a_late_answer_is_stored_even_when_the_task_is_full_by_then():
    link = judging_link(peers=1, judges=1)
    task = work.next_task(link, "j1", own("j1"))
    expire(worker_id="j1")
    assert work.next_task(link, "j2", own("j2")).pk == task.pk
    answer(link, task, "j2")
    late = answer(link, task, "j1")  # after its hold expired and the slot went to j2
    assert late.pk and LiteAssignment.objects.filter(task=task).count() == 2
    assert not LiteReservation.objects.exists()


@pytest.mark.postgres
def test_an_answer_waiting_while_its_hold_is_taken_over_is_a_late_one(transactional_db, settings):
    """j1 submits while a newcomer takes its hold over under the task's lock. The hold ended at
    the taker's time, later than the moment j1's request began: read with that earlier time it
    looked live, and the answer was stored on time beside the taker's hold, past judges + late."""
    settings.LIGHTWEIGHT_LATE_ANSWERS = 0
    link = judging_link(peers=1, judges=1)
    task = work.next_task(link, "j1", own("j1"))
    locked, submitted = threading.Event(), []

    def submit():
        locked.wait()
        try:
            submitted.append(answer(link, task, "j1"))
        except work.WorkError as error:
            submitted.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=submit)
    thread.start()
    with transaction.atomic():  # the take-over, as _take_over does it
        queries.lock_task(task.pk, skip_locked=False)
        locked.set()
        time.sleep(0.5)  # j1's request began and waits for the task's lock
        hold = LiteReservation.objects.get(worker_id="j1")
        adapt = connection.ops.adapt_datetimefield_value
        assert queries.end_hold({"hold": hold.pk, "now": adapt(timezone.now())})
        LiteReservation.objects.create(task=task, worker_id="j2", expires_at=timezone.now() + timedelta(minutes=5))
    thread.join()
    assert isinstance(submitted[0], work.WorkError) and str(submitted[0]) == work.NOT_HELD
    assert not LiteAssignment.objects.exists()
    answer(link, task, "j2")
    assert LiteAssignment.objects.filter(task=task).count() == 1


@pytest.mark.django_db
def test_a_worker_whose_tasks_are_all_held_is_told_to_come_back_on_the_page_and_in_the_api():
    link = judging_link(peers=1, judges=1)
    url, api = f"/lightweight/crowd/{link.token}/", f"/api/crowd/{link.token}/"
    first, second = Client(), Client()
    first.post(url, {"worker": "j1"})
    assert 'name="task"' in first.get(url).content.decode()  # j1 holds the only task
    second.post(url, {"worker": "j2"})
    waiting = second.get(url)
    assert waiting.status_code == 200 and 200 < int(waiting["Retry-After"]) <= 300
    assert work.ALL_RESERVED in waiting.content.decode() and "no more tasks" not in waiting.content.decode()
    held = APIClient().get(api, {"worker": "j3"})
    assert held.status_code == 200 and held["Retry-After"]
    assert held.data == {
        "done": False,
        "retry_after": int(held["Retry-After"]),
        "detail": work.ALL_RESERVED,
        "key": held.data["key"],
    }
    assert 'name="task"' in first.get(url).content.decode()  # j1 still holds it

    task = LiteTask.objects.get(batch=1)
    first.post(url, {"task": task.pk, **{f"a{pk}": "present" for pk in task.statement_ids}})
    assert "There are no more tasks for you here." in second.get(url).content.decode()  # answered: nothing left
    assert APIClient().get(api, {"worker": "j3", "key": held.data["key"]}).data == {
        "done": True,
        "key": held.data["key"],
    }


@pytest.mark.django_db
def test_a_worker_whose_chosen_tasks_others_fill_round_after_round_gets_a_slot_left(monkeypatch):
    """A burst chases the same tasks: every task a choice proposes goes to another worker before this
    request locks it, for more rounds than a fixed bound (three) allowed. While the link has a free
    slot the worker gets one, never "all taken"."""
    link = judging_link(peers=24, judges=1)  # batch 1: 24 tasks of one slot
    lock, taken = queries.lock_task, []

    def others_first(pk, *, skip_locked):
        if len(taken) < 5 * work.RESERVE_CANDIDATES:
            LiteAssignment.objects.create(task_id=pk, worker_id=f"other{len(taken)}", external_id=f"x{len(taken)}")
            taken.append(pk)
        return lock(pk, skip_locked=skip_locked)

    monkeypatch.setattr(queries, "lock_task", others_first)
    task = work.next_task(link, "late", own("late"))
    assert len(taken) == 5 * work.RESERVE_CANDIDATES
    assert task is not None and task.pk not in taken
    assert LiteReservation.objects.get(worker_id="late").task_id == task.pk


@pytest.mark.postgres
def test_workers_arriving_together_never_share_a_task_that_needs_one_judge(transactional_db):
    link = judging_link(peers=RACE_WORKERS, judges=1)
    workers = [f"j{i}" for i in range(RACE_WORKERS)]
    tasks = at_once([lambda w=w: work.next_task(link, w, own(w)) for w in workers])
    assert None not in tasks and len({t.pk for t in tasks}) == RACE_WORKERS
    assert live_holds(link) == {t.pk: 1 for t in tasks}


@pytest.mark.postgres
def test_workers_arriving_together_fill_tasks_of_two_judges_without_overfilling(transactional_db):
    link = judging_link(peers=RACE_WORKERS // 2, judges=2)
    tasks = at_once([lambda w=w: work.next_task(link, w, own(w)) for w in (f"j{i}" for i in range(RACE_WORKERS))])
    assert None not in tasks
    assert live_holds(link) == {pk: 2 for pk in LiteTask.objects.filter(batch=1).values_list("pk", flat=True)}


@pytest.mark.postgres
def test_the_last_slot_of_a_task_goes_to_one_of_the_workers_asking_at_once(transactional_db):
    """All workers want the same slot: without the task's lock several would count it free (each
    reads before the others commit); repeated, so the threads surely overlap."""
    link = judging_link(peers=1, judges=1)
    for round_ in range(5):
        LiteReservation.objects.all().delete()
        tasks = at_once(
            [lambda w=w: work.next_task(link, w, own(w)) for w in (f"r{round_}w{i}" for i in range(RACE_WORKERS))]
        )
        assert sum(t is not None for t in tasks) == 1, round_
        assert sum(live_holds(link).values()) == 1, round_


@pytest.mark.postgres
def test_one_worker_in_several_tabs_holds_one_slot(transactional_db):
    link = judging_link(peers=RACE_WORKERS, judges=1)
    tasks = at_once([lambda: work.next_task(link, "j1", own("j1")) for _ in range(4)])
    assert len({t.pk for t in tasks}) == 1 and LiteReservation.objects.filter(worker_id="j1").count() == 1

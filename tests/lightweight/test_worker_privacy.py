"""Worker ids are personal data: pseudonymised (scores unchanged) or deleted per run, by the run's
coordinators only, with confirmation; exports can carry the pseudonyms."""

import csv
import io
from datetime import timedelta

import pytest
from django.db.models import Q
from django.test import Client
from django.utils import timezone

from annotation.lightweight import scores as lightweight_scores
from annotation.lightweight import work
from annotation.lightweight.models import (
    CrowdLink,
    LiteAssignment,
    LiteReservation,
    LiteResult,
    LiteStatement,
    LiteTask,
    LiteWorkerKey,
    LiteWriting,
)
from annotation.lightweight.privacy import delete_worker_ids, pseudonym, pseudonymise

from tests.lightweight.test_crowd_submissions import own
from tests.lightweight.world import client_for, judge_every_task, small_run

pytestmark = pytest.mark.django_db
# Per task (2 statements): good1, good2 and good3 agree, rogue answers the opposite (removed).
# Every id has a letter outside 0-9a-f: raw_ids_left looks for ids as substrings, and a hex-only id
# ("bad") turns up by chance inside the hex pseudonyms (1 run in ~30).
ANSWERS = {"good1": "pn", "good2": "pn", "good3": "pp", "rogue": "np"}


@pytest.fixture
def run():
    run = small_run(peers=2)
    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING)
    for worker, codes in ANSWERS.items():
        judge_every_task(
            link,
            worker,
            codes,
            record=lambda task, w=worker: {"platform": "mturk", "platform_assignment": f"A{w}{task.pk}".upper()},
        )
    assert LiteAssignment.objects.count() == len(ANSWERS) * LiteTask.objects.filter(pyramid=run).count()
    work.next_task(
        CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING), "reader", own("reader")
    )  # a live hold
    lightweight_scores.recompute(run.pk)
    return run


def scores(run):
    result = lightweight_scores.compute(run)
    return (
        {(s.summary, s.score) for s in result.summaries},
        {(s.system, s.score) for s in result.systems},
        sorted((w.agreement, w.pairs, w.removed) for w in result.workers),
    )


def raw_ids_left(run) -> list:
    workers = [*ANSWERS, "w1", "w2", "reader"]
    found = []
    for worker in workers:
        found += LiteAssignment.objects.filter(Q(worker_id=worker) | Q(external_id__contains=worker), task__pyramid=run)
        found += LiteWriting.objects.filter(pyramid=run, worker_id=worker)
        found += LiteStatement.objects.filter(pyramid=run, author=worker)
        found += LiteReservation.objects.filter(task__pyramid=run, worker_id=worker)
        # a worker's key names it too: it goes unless the worker is judging (a hold left)
        found += LiteWorkerKey.objects.filter(pyramid=run, worker_id=worker).exclude(
            worker_id__in=LiteReservation.objects.filter(task__pyramid=run).values("worker_id")
        )
        if worker in str(LiteResult.objects.get(pyramid=run).payload):
            found.append(("stored scores", worker))
    return found


def test_pseudonymising_replaces_every_worker_id_and_keeps_the_scores(run):
    before = scores(run)
    assert any(removed for _, _, removed in before[2])  # the filter is at work: it must survive
    exported = (
        client_for("coord", run.dataset)
        .get(f"/api/lightweight/{run.pk}/scores/?level=worker&workers=pseudonyms")
        .json()
    )
    coordinator = client_for("coord2", run.dataset)
    refused = coordinator.post(f"/lightweight/{run.pk}/do/pseudonymise/", follow=True)  # not confirmed
    assert "tick the box" in refused.content.decode() and LiteAssignment.objects.filter(worker_id="rogue").exists()
    page = coordinator.post(f"/lightweight/{run.pk}/do/pseudonymise/", {"confirm": "yes"}, follow=True)
    assert "Worker ids pseudonymised: 18 submissions changed" in page.content.decode()  # 16 answers, 2 writings
    assert raw_ids_left(run) == [LiteReservation.objects.get(worker_id="reader")]  # work in progress (below)
    assert scores(run) == before
    # One worker, one pseudonym, everywhere; the export made before names them the same way.
    rogue = {a.worker_id for a in LiteAssignment.objects.filter(task__pyramid=run, answers__in=["np"])}
    assert (
        rogue == {pseudonym(run, "rogue")}
        and len({a.worker_id for a in LiteAssignment.objects.filter(task__pyramid=run)}) == 4
    )
    assert {r["worker"] for r in exported} == {a.worker_id for a in LiteAssignment.objects.filter(task__pyramid=run)}
    assert not LiteAssignment.objects.exclude(platform_assignment="").exists()  # leads back to the worker
    assert lightweight_scores.recompute(run.pk) and scores(run) == before
    run.refresh_from_db()
    assert run.workers_pseudonymised_at is not None
    # Again: nothing left to change.
    assert pseudonymise(run) == 0


def test_a_worker_answering_again_after_pseudonymising_is_pseudonymised_alike(run):
    pseudonymise(run)
    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING)
    elsewhere = own("good1", run)
    task = work.next_task(link, "good1", elsewhere)  # one it has answered, under its pseudonym
    work.submit_judgments(link, task, "good1", {pk: "present" for pk in task.statement_ids}, elsewhere)
    pseudonymise(run)
    mine = LiteAssignment.objects.filter(task=task, worker_id=pseudonym(run, "good1"))
    assert mine.count() == 2 and raw_ids_left(run) == [LiteReservation.objects.get(worker_id="reader")]  # in progress


def test_deleting_worker_ids(run):
    coordinator = client_for("coord", run.dataset)
    coordinator.post(f"/lightweight/{run.pk}/do/delete-workers/", {"confirm": "yes"})
    assert not LiteAssignment.objects.filter(task__pyramid=run).exclude(worker_id="").exists()
    assert not LiteWriting.objects.filter(pyramid=run).exclude(worker_id="").exists()
    for worker in ANSWERS:
        assert not LiteAssignment.objects.filter(external_id__contains=worker).exists()
    assert list(LiteReservation.objects.filter(task__pyramid=run).values_list("worker_id", flat=True)) == [
        "reader"
    ]  # in progress
    assert not LiteStatement.objects.filter(pyramid=run).exclude(author="").exists()
    lightweight_scores.recompute(run.pk)
    assert lightweight_scores.compute(run).workers == ()  # nobody left to filter
    assert "Deleted on" in coordinator.get(f"/lightweight/{run.pk}/").content.decode()


def test_only_the_runs_coordinators_may_and_only_by_a_csrf_checked_post(run):
    other = client_for("other")
    assert other.post(f"/lightweight/{run.pk}/do/pseudonymise/", {"confirm": "yes"}).status_code == 404
    assert other.post(f"/lightweight/{run.pk}/do/delete-workers/", {"confirm": "yes"}).status_code == 404
    assert (
        Client().post(f"/lightweight/{run.pk}/do/delete-workers/", {"confirm": "yes"}).status_code == 302
    )  # to log in
    forged = client_for("coord", run.dataset, enforce_csrf_checks=True)
    assert forged.post(f"/lightweight/{run.pk}/do/delete-workers/", {"confirm": "yes"}).status_code == 403
    assert forged.get(f"/lightweight/{run.pk}/do/delete-workers/").status_code == 302  # a GET changes nothing
    assert LiteAssignment.objects.filter(worker_id="rogue").count() == 4


def test_submissions_export_with_pseudonyms(run):
    coordinator = client_for("coord", run.dataset)
    plain = coordinator.get(f"/api/lightweight/{run.pk}/submissions/?format=csv")
    rows = list(csv.DictReader(io.StringIO(plain.content.decode())))
    assert len(rows) == 18 and {r["worker"] for r in rows} == {*ANSWERS, "w1", "w2"}
    hidden = list(
        csv.DictReader(
            io.StringIO(
                coordinator.get(
                    f"/api/lightweight/{run.pk}/submissions/?format=csv&workers=pseudonyms"
                ).content.decode()
            )
        )
    )
    assert [r["worker"] for r in hidden] == [pseudonym(run, r["worker"]) for r in rows]
    assert client_for("other").get(f"/api/lightweight/{run.pk}/submissions/").status_code == 404


def test_the_pseudonym_key_is_never_shown(run):
    coordinator = client_for("coord", run.dataset)
    for url in (
        f"/lightweight/{run.pk}/",
        f"/api/lightweight/{run.pk}/",
        f"/api/lightweight/{run.pk}/dashboard/",
        f"/api/lightweight/{run.pk}/submissions/",
    ):
        assert run.pseudonym_key not in coordinator.get(url).content.decode(), url


def test_the_command_line_export_carries_pseudonyms_and_says_what_was_counted(run):
    from django.core.management import call_command

    def export(**options):
        out = io.StringIO()
        call_command(
            "export_lightweight", dataset=run.dataset.name, level="worker", format="csv", stdout=out, **options
        )
        return out.getvalue().splitlines()

    assert export(pseudonyms=True, verified_only=True) == [
        "worker,agreement,pairs,removed,counted"
    ]  # nothing verified yet
    rows = list(csv.DictReader(export(pseudonyms=True)))
    assert {r["worker"] for r in rows} == {pseudonym(run, w) for w in ANSWERS} and {r["counted"] for r in rows} == {
        "all answers"
    }


def test_a_writer_writing_again_after_pseudonymising_does_not_break_the_next_one(run):
    run.writers_per_reference = 2
    run.save()
    pseudonymise(run)
    reference = LiteWriting.objects.get(worker_id=pseudonym(run, "w1")).reference
    work.submit_writing(run, reference, "w1", ["The storm hit the coast hard", "It was a Monday storm"], own("w1", run))
    assert pseudonymise(run) == 1
    assert set(LiteWriting.objects.filter(reference=reference).values_list("worker_id", flat=True)) == {
        pseudonym(run, "w1"),
        "",
    }


@pytest.mark.parametrize("forget", [pseudonymise, delete_worker_ids])
def test_a_worker_judging_meanwhile_hands_its_answer_in_and_the_next_run_of_it_takes_the_id(run, forget, settings):
    """An answer is taken only against its worker's own hold: pseudonymising or deleting the ids
    while a worker reads a task leaves that hold (and any still able to take a late answer) as it
    is, and removes the holds past answering, which keep ids nothing needs any more."""
    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING)
    held = LiteReservation.objects.get(worker_id="reader")
    task = work.next_task(link, "late", own("late"))
    LiteReservation.objects.filter(worker_id="late").update(
        expires_at=timezone.now() - timedelta(seconds=60)
    )  # a late answer may come
    gone = work.next_task(link, "gone", own("gone"))
    LiteReservation.objects.filter(worker_id="gone").update(
        expires_at=timezone.now() - timedelta(seconds=settings.LIGHTWEIGHT_RESERVATION_SECONDS + 1)
    )  # past answering
    forget(run)
    assert set(LiteReservation.objects.filter(task__pyramid=run).values_list("worker_id", flat=True)) == {
        "reader",
        "late",
    }
    for worker, judged in (("reader", held.task), ("late", task)):
        work.submit_judgments(link, judged, worker, {pk: "present" for pk in judged.statement_ids}, own(worker, run))
    assert not LiteReservation.objects.filter(task__pyramid=run).exists() and gone is not None
    forget(run)
    lightweight_scores.recompute(run.pk)
    assert raw_ids_left(run) == []

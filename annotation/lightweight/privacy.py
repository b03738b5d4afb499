"""Worker ids are personal data: a run's coordinator can pseudonymise them or delete them.

- :func:`pseudonymise` replaces every worker id of the run (answers, statement writings, statement
  authors, the stored scores) by :func:`pseudonym`: an HMAC-SHA256 of the id under the run's
  own secret key (``pseudonym_key``, never shown or exported), so the same worker keeps the same
  pseudonym everywhere in the run (the worker filter, and so the scores, do not change) and the id
  cannot be read back from it. The platforms' submission ids go too (through the platform they
  lead back to the worker). Answers that arrive later carry ids again: pseudonymise again.
- Holds (``LiteReservation``) are work in progress: an answer is taken only against its worker's
  own hold, so the holds that can still take one keep their worker's id (a worker reading a task
  meanwhile hands its answer in; the answer then carries the id like any later one), and the
  holds past answering go, ids and all (:func:`_drop_dead_holds`).
- :func:`delete_worker_ids` removes them, with the same reach. The worker filter then has nothing
  to group answers by, so every remaining answer counts (the scores can change; the page says so).
- Exports can carry pseudonyms without changing what is stored (:func:`export_worker`): the same
  function, so an export made before and the data pseudonymised after agree.
"""

from __future__ import annotations

import hashlib
import hmac

from django.db import transaction
from django.utils import timezone

from annotation.lightweight.models import (
    LightweightPyramid,
    LiteAssignment,
    LiteReservation,
    LiteResult,
    LiteStatement,
    LiteWorkerKey,
    LiteWriting,
)
from annotation.lightweight.runs import touch
from annotation.lightweight.work import PSEUDONYM_PREFIX, answerable_after

PSEUDONYM_HEX = 16  # 64 bits: no two workers of a run share one (a collision is ~ n² / 2^65)


def is_pseudonym(worker: str) -> bool:
    return worker.startswith(PSEUDONYM_PREFIX) and len(worker) == len(PSEUDONYM_PREFIX) + PSEUDONYM_HEX


def pseudonym(run: LightweightPyramid, worker: str) -> str:
    """The run's stable pseudonym of a worker id (a pseudonym and the empty id stay as they are)."""
    if not worker or is_pseudonym(worker):
        return worker
    digest = hmac.new(run.pseudonym_key.encode(), worker.encode(), hashlib.sha256).hexdigest()
    return PSEUDONYM_PREFIX + digest[:PSEUDONYM_HEX]


def export_worker(run: LightweightPyramid, pseudonyms: bool):
    """The worker id as an export shows it: itself, or its pseudonym."""
    return (lambda worker: pseudonym(run, worker or "")) if pseudonyms else (lambda worker: worker)


def _replace(run: LightweightPyramid, new_id) -> int:
    """Give every worker id of the run the value ``new_id(old, row)``; the number of ids replaced."""
    changed = 0
    for model, rows in (
        (LiteAssignment, LiteAssignment.objects.filter(task__pyramid=run)),
        (LiteWriting, LiteWriting.objects.filter(pyramid=run)),
    ):
        items = list(
            rows.exclude(worker_id="").only(
                "id", "worker_id", "external_id", *(["task_id"] if model is LiteAssignment else ["reference_id"])
            )
        )
        taken = (
            {(item.task_id, item.external_id) for item in items}
            if model is LiteAssignment
            else {(item.reference_id, item.worker_id) for item in items}
        )
        updated = []
        for item in items:
            new = new_id(item.worker_id, item)
            if new == item.worker_id:
                continue
            if model is LiteWriting and new:
                # The same worker wrote about this reference under its pseudonym and again under
                # its id (one writing per worker and reference): the second keeps no id.
                new = "" if (item.reference_id, new) in taken else new
                taken.add((item.reference_id, new))
            if model is LiteAssignment and item.external_id == f"app:{item.worker_id}":
                # A worker who answered a task under its pseudonym and again under its id (after
                # a first pseudonymisation) keeps both answers apart.
                key = f"app:{new}" if new and (item.task_id, f"app:{new}") not in taken else f"app:deleted-{item.pk}"
                taken.add((item.task_id, key))
                item.external_id = key
            item.worker_id = new
            updated.append(item)
        model.objects.bulk_update(updated, ["worker_id", "external_id"], batch_size=2000)
        changed += len(updated)
    return changed


def pseudonymise(run: LightweightPyramid) -> int:
    """Replace the run's worker ids by their pseudonyms (irreversibly); the number replaced."""

    def new_id(worker, _row):
        return pseudonym(run, worker)

    with transaction.atomic():
        run = LightweightPyramid.objects.select_for_update().get(pk=run.pk)
        changed = _replace(run, new_id)
        statements = list(LiteStatement.objects.filter(pyramid=run).exclude(author="").only("id", "author"))
        for statement in statements:
            statement.author = pseudonym(run, statement.author)
        LiteStatement.objects.bulk_update(statements, ["author"], batch_size=2000)
        _drop_dead_holds(run)
        _forget_submission_ids(run)
        result = LiteResult.objects.filter(pyramid=run).first()
        if result is not None:  # the same scores under the new names until the recomputation
            for row in result.payload.get("workers", []):
                row["worker"] = pseudonym(run, row["worker"])
            result.save(update_fields=["payload"])
        LightweightPyramid.objects.filter(pk=run.pk).update(workers_pseudonymised_at=timezone.now())
        touch(run)
    return changed


def delete_worker_ids(run: LightweightPyramid) -> int:
    """Remove the run's worker ids; the number removed. Every answer then counts unfiltered."""
    with transaction.atomic():
        run = LightweightPyramid.objects.select_for_update().get(pk=run.pk)
        changed = _replace(run, lambda worker, row: "")
        LiteStatement.objects.filter(pyramid=run).exclude(author="").update(author="")
        _drop_dead_holds(run)
        _forget_submission_ids(run)
        LiteResult.objects.filter(pyramid=run).delete()  # it names workers; recomputed below
        LightweightPyramid.objects.filter(pk=run.pk).update(workers_deleted_at=timezone.now())
        touch(run)
    return changed


def _drop_dead_holds(run: LightweightPyramid) -> None:
    """Delete the run's holds past answering (the others are the workers' answers in progress), and
    the keys of workers without one (they name workers too; a worker coming back gets a new key)."""
    LiteReservation.objects.filter(task__pyramid=run, expires_at__lte=answerable_after(timezone.now())).delete()
    LiteWorkerKey.objects.filter(pyramid=run).exclude(
        worker_id__in=LiteReservation.objects.filter(task__pyramid=run).values("worker_id")
    ).delete()


def _forget_submission_ids(run: LightweightPyramid) -> None:
    LiteAssignment.objects.filter(task__pyramid=run).exclude(platform_assignment="").update(platform_assignment="")
    LiteWriting.objects.filter(pyramid=run).exclude(platform_assignment="").update(platform_assignment="")

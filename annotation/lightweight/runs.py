"""A lightweight-pyramid run's revision and the background recomputation of its scores.

Every change that can alter a run's scores (answers, tasks, statements, settings) calls
:func:`touch` inside its transaction: the revision goes up and, after the commit, one
recomputation is published on the one background path (``annotation.jobs.queue``: the Celery task
with Redis, in-process without it, as every job of the app). A burst of changes (a crowd
submitting) costs one recomputation, as the expert scores do (``peers.recompute``).
"""

from django.db import transaction
from django.db.models import F

from annotation.jobs import queue
from annotation.lightweight.models import LightweightPyramid

PENDING_KIND = "lightweight"


def touch(run: LightweightPyramid, notify: bool = True, reload: bool = True) -> None:
    """Bump the run's revision; with ``notify``, recompute after the commit (a caller changing
    many things in several transactions passes False and calls :func:`schedule` once at the end).
    ``reload`` reads the new revision into ``run`` (a caller that does not need it saves a query)."""
    LightweightPyramid.objects.filter(pk=run.pk).update(revision=F("revision") + 1)
    if reload:
        run.refresh_from_db(fields=["revision"])
    if notify:
        touched(run)


def touched(run: LightweightPyramid) -> None:
    """The run's revision was bumped by the caller's own statement (a crowd answer:
    ``queries.store_answer``): recompute after the commit, as :func:`touch` does."""
    transaction.on_commit(lambda: schedule([run.pk]))


def schedule(run_ids) -> None:
    """Enqueue the recomputation of these runs (never raises: a stale result is caught up later)."""
    queue.publish(PENDING_KIND, run_ids)

"""Celery tasks of the lightweight pyramids: thin calls into ``annotation.lightweight.scores``.

Published by name through ``annotation.jobs.queue``; without ``REDIS_URL`` the in-process runner
calls the same service function after the commit that made the run stale.
"""

from celery import shared_task
from celery.signals import worker_ready

from annotation.jobs.task_lock import RunsAlone
from annotation.lightweight import scores
from annotation.lightweight.models import LightweightPyramid
from annotation.lightweight.runs import schedule


@shared_task(name="annotation.recompute_lightweight", acks_late=True, base=RunsAlone)
def recompute_lightweight(run_ids: list[int]) -> int:
    return scores.recompute_runs(run_ids)


@shared_task(name="annotation.recompute_stale_lightweight")
def recompute_stale_lightweight() -> int:
    """Runs whose stored scores are missing or not current (``scores.stale_among``) are enqueued."""
    ids = scores.stale_among(LightweightPyramid.objects.values_list("id", flat=True))
    schedule(ids)
    return len(ids)


@worker_ready.connect
def _catch_up_on_start(sender=None, **kwargs):
    recompute_stale_lightweight.delay()

"""Celery tasks of the lightweight pyramids: thin calls into ``annotation.lightweight.scores``.

Published by name through ``annotation.jobs.queue``; without ``REDIS_URL`` the in-process runner
calls the same service function after the commit that made the run stale.
"""
from celery import shared_task
from celery.signals import worker_ready
from django.db.models import F, Q

from annotation.jobs.task_lock import RunsAlone
from annotation.lightweight.models import LightweightPyramid
from annotation.lightweight.runs import schedule
from annotation.lightweight import scores


@shared_task(name="annotation.recompute_lightweight", acks_late=True, base=RunsAlone)
def recompute_lightweight(run_ids: list[int]) -> int:
    return scores.recompute_runs(run_ids)


@shared_task(name="annotation.recompute_stale_lightweight")
def recompute_stale_lightweight() -> int:
    """Runs whose stored scores lag behind their revision (or are missing) are enqueued."""
    ids = list(LightweightPyramid.objects.filter(Q(result__isnull=True) | Q(result__revision__lt=F("revision")))
               .values_list("id", flat=True))
    schedule(ids)
    return len(ids)


@worker_ready.connect
def _catch_up_on_start(sender=None, **kwargs):
    recompute_stale_lightweight.delay()

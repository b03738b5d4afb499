"""Celery task of the lightweight pyramids (found by the Celery app next to ``annotation.tasks``).

A thin call into ``annotation.services.lightweight_runs``; without ``REDIS_URL`` the background
runner (``annotation/background.py``) runs it in-process after the commit that scheduled it.
"""
from celery import shared_task
from celery.signals import worker_ready

from .task_lock import RunsAlone


@shared_task(name="annotation.recompute_lightweight", acks_late=True, base=RunsAlone)
def recompute_lightweight(run_ids: list[int]) -> int:
    from .services.lightweight_runs import recompute_runs

    return recompute_runs(run_ids)


@shared_task(name="annotation.recompute_stale_lightweight")
def recompute_stale_lightweight() -> int:
    """Runs whose stored scores lag behind their revision (or are missing) are enqueued."""
    from django.db.models import F, Q

    from .models import LightweightPyramid
    from .services.lightweight_runs import schedule

    ids = list(LightweightPyramid.objects.filter(Q(result__isnull=True) | Q(result__revision__lt=F("revision")))
               .values_list("id", flat=True))
    schedule(ids)
    return len(ids)


@worker_ready.connect
def _catch_up_on_start(sender=None, **kwargs):
    recompute_stale_lightweight.delay()

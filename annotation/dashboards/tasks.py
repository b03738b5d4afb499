"""Celery tasks of the dashboards (their own queue): thin calls into ``annotation.dashboards.snapshots``."""

from celery import shared_task
from celery.signals import worker_ready

from annotation.dashboards import snapshots
from annotation.jobs.task_lock import RunsAlone


@shared_task(name="annotation.recompute_dashboards", acks_late=True, base=RunsAlone)
def recompute_dashboards(dataset_ids: list[int]) -> int:
    """Recompute and store the dashboards of these datasets; returns how many were written."""
    return snapshots.recompute_datasets(dataset_ids)


@shared_task(name="annotation.recompute_stale_dashboards")
def recompute_stale_dashboards() -> int:
    ids = snapshots.stale_datasets()
    snapshots.schedule(ids)
    return len(ids)


@worker_ready.connect
def _catch_up_on_start(sender=None, **kwargs):
    """Dashboards that went stale while no worker was there are recomputed now."""
    recompute_stale_dashboards.delay()

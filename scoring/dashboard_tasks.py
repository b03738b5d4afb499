"""Celery tasks of the coordinator dashboards (registered through ``CELERY_IMPORTS`` in settings)."""
from celery import shared_task
from celery.signals import worker_ready


@shared_task(name="scoring.recompute_dashboards", acks_late=True)
def recompute_dashboards(dataset_ids: list[int]) -> int:
    """Recompute and store the dashboards of these datasets; returns how many were written."""
    from annotation.services.dashboard_snapshots import recompute_datasets

    return recompute_datasets(dataset_ids)


@shared_task(name="scoring.recompute_stale_dashboards")
def recompute_stale_dashboards() -> int:
    from annotation.services.dashboard_snapshots import schedule, stale_datasets

    ids = stale_datasets()
    schedule(ids)
    return len(ids)


@worker_ready.connect
def _catch_up_on_start(sender=None, **kwargs):
    """Dashboards that went stale while no worker was there are recomputed now."""
    recompute_stale_dashboards.delay()

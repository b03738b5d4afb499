"""Celery tasks: the edge where the pure scoring core (``scoring/``) meets the database.

They live in the app that owns the data (``scoring/`` imports nothing of Django), and Celery finds
them through ``autodiscover_tasks``. Every task is a thin call into ``annotation.services``; the
recomputations never run twice at once (``task_lock.RunsAlone``); the
in-process runner used without ``REDIS_URL`` runs the very same functions.
"""
from celery import shared_task
from celery.signals import worker_ready

from .task_lock import RunsAlone


@shared_task(name="annotation.recompute_scores", acks_late=True, base=RunsAlone)
def recompute_scores(annotation_ids: list[int]) -> int:
    from .services.recompute import recompute_annotations

    return recompute_annotations(annotation_ids)


@shared_task(name="annotation.recompute_agreement", acks_late=True, base=RunsAlone)
def recompute_agreement(topic_ids: list[int]) -> int:
    from .services.recompute import recompute_topics

    return recompute_topics(topic_ids)


@shared_task(name="annotation.recompute_dashboards", acks_late=True, base=RunsAlone)
def recompute_dashboards(dataset_ids: list[int]) -> int:
    """Recompute and store the dashboards of these datasets; returns how many were written."""
    from .services.dashboard_snapshots import recompute_datasets

    return recompute_datasets(dataset_ids)


@shared_task(name="annotation.recompute_stale")
def recompute_stale() -> list[int]:
    from .services.recompute import schedule_stale

    return list(schedule_stale())


@shared_task(name="annotation.recompute_stale_dashboards")
def recompute_stale_dashboards() -> int:
    from .services.dashboard_snapshots import schedule, stale_datasets

    ids = stale_datasets()
    schedule(ids)
    return len(ids)


@shared_task(name="annotation.forget_expired_idempotency_keys")
def forget_expired_idempotency_keys() -> int:
    from .services.idempotency import forget_expired

    return forget_expired()


@worker_ready.connect
def _catch_up_on_start(sender=None, **kwargs):
    """Scores and dashboards that went stale while no worker (or no broker) was there are recomputed now."""
    recompute_stale.delay()
    recompute_stale_dashboards.delay()

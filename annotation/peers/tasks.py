"""Celery tasks of the expert scores: thin calls into ``annotation.peers.recompute``.

Published by name through ``annotation.jobs.queue`` (which imports no task module); without
``REDIS_URL`` the in-process runner calls the same service functions. Recomputations never run
twice at once (``jobs.task_lock.RunsAlone``). Task names are stable (``annotation.*``): messages
queued by an older version are still understood.
"""

from celery import shared_task
from celery.signals import worker_ready

from annotation.jobs.task_lock import RunsAlone
from annotation.peers import recompute


@shared_task(name="annotation.recompute_scores", acks_late=True, base=RunsAlone)
def recompute_scores(annotation_ids: list[int]) -> int:
    return recompute.recompute_annotations(annotation_ids)


@shared_task(name="annotation.recompute_agreement", acks_late=True, base=RunsAlone)
def recompute_agreement(topic_ids: list[int]) -> int:
    return recompute.recompute_topics(topic_ids)


@shared_task(name="annotation.recompute_stale")
def recompute_stale() -> list[int]:
    return list(recompute.schedule_stale())


@worker_ready.connect
def _catch_up_on_start(sender=None, **kwargs):
    """Scores that went stale while no worker (or no broker) was there are recomputed now."""
    recompute_stale.delay()

"""Celery tasks of the pyramids: thin calls into ``annotation.pyramids.construction``.

Published by name through ``annotation.jobs.queue`` (job ``construction``); without ``REDIS_URL``
the in-process runner calls the same service function. The sweeps (beat's ``recompute_stale``,
every worker start) publish the stale topics with the scores' (``peers.recompute.schedule_stale``).
"""
from celery import shared_task

from annotation.jobs.task_lock import RunsAlone
from annotation.pyramids import construction


@shared_task(name="annotation.recompute_construction", acks_late=True, base=RunsAlone)
def recompute_construction(topic_ids: list[int]) -> int:
    return construction.recompute_topics(topic_ids)

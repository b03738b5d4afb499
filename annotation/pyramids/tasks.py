"""Celery tasks of the pyramids: thin calls into ``annotation.pyramids.construction`` and
``annotation.pyramids.automatic_peer_scores``.

Published by name through ``annotation.jobs.queue`` (jobs ``construction`` and ``automatic``); without ``REDIS_URL``
the in-process runner calls the same service function. The sweeps (beat's ``recompute_stale``,
every worker start) publish the stale topics with the scores' (``peers.recompute.schedule_stale``).
"""

from celery import shared_task

from annotation.jobs.task_lock import RunsAlone
from annotation.pyramids import automatic_peer_scores, construction


@shared_task(name="annotation.recompute_construction", acks_late=True, base=RunsAlone)
def recompute_construction(topic_ids: list[int]) -> int:
    return construction.recompute_topics(topic_ids)


@shared_task(name="annotation.compute_automatic_scores", acks_late=True, base=RunsAlone)
def compute_automatic_scores(pyramid_ids: list[int]) -> int:
    return automatic_peer_scores.compute_pyramids(pyramid_ids)

"""Celery tasks: the edge where the pure scoring core meets the database (via annotation services)."""
from celery import shared_task
from celery.signals import worker_ready


@shared_task(name="scoring.recompute_scores", acks_late=True)
def recompute_scores(annotation_ids: list[int]) -> int:
    from annotation.services.recompute import recompute_annotations

    return recompute_annotations(annotation_ids)


@shared_task(name="scoring.recompute_agreement", acks_late=True)
def recompute_agreement(topic_ids: list[int]) -> int:
    from annotation.services.recompute import recompute_topics

    return recompute_topics(topic_ids)


@shared_task(name="scoring.recompute_stale")
def recompute_stale() -> list[int]:
    from annotation.services.recompute import schedule_stale

    return list(schedule_stale())


@worker_ready.connect
def _catch_up_on_start(sender=None, **kwargs):
    """Scores that went stale while no worker (or no broker) was there are recomputed now."""
    recompute_stale.delay()

"""Celery task of the API: forgetting expired ``Idempotency-Key`` answers (beat, hourly)."""

from celery import shared_task

from annotation.api.idempotency_keys import forget_expired


@shared_task(name="annotation.forget_expired_idempotency_keys")
def forget_expired_idempotency_keys() -> int:
    return forget_expired()

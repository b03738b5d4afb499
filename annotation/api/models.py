"""Answers to POST requests sent with an ``Idempotency-Key`` (see ``api.idempotency_keys``)."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class IdempotentRequest(models.Model):
    """One POST made with an ``Idempotency-Key``: what it asked (its body's hash) and its answer.

    Written in the same transaction as what the request created, so a request whose write committed
    has its answer stored, and one whose answer is stored has committed: a retry gets the first
    answer instead of a duplicate. In the database, so every web process sees it; rows older than
    ``IDEMPOTENCY_KEY_SECONDS`` are forgotten."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    endpoint = models.CharField(max_length=500, help_text="Method and path, e.g. 'POST /api/scus/'.")
    key = models.CharField(max_length=255)
    body_hash = models.CharField(max_length=64, help_text="SHA-256 of the request body (hex).")
    status = models.PositiveSmallIntegerField(null=True, help_text="The answer's status (null until it is stored).")
    headers = models.JSONField(default=dict, help_text="The answer's Content-Type, ETag and Location.")
    content = models.BinaryField(default=b"")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "endpoint", "key"], name="idempotency_one_answer_per_key")
        ]
        indexes = [models.Index(fields=["user", "created_at"], name="idempotency_user_age")]

    def __str__(self):
        return f"{self.endpoint} with key {self.key[:40]} by user {self.user_id}"

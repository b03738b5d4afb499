"""Lightweight Pyramids (Shapira et al. 2019): crowd-written statements judged present / absent in peers.

A ``LightweightPyramid`` is one evaluation run over a dataset (e.g. "crowd, May" or "REALSumm
release"): its statements per topic, its judging tasks and the crowd's answers, and the settings its
scores are computed with. Several may cover the same topics (crowd-written, imported, or made from
an expert pyramid's SCU labels), so both methods can be compared. The worker filter spans the
whole run (a worker's agreement is over all their pairs), which is why the run, not the topic,
holds the settings.

Answers are stored compactly: one ``LiteAssignment`` per worker and task with one character per
task statement (``p`` present, ``n`` absent, ``b`` blank), aligned with ``LiteTask.statement_ids``.
REALSumm is 7,743 such rows rather than 81,581 answer rows.

While a crowd worker reads a task, one of its ``judges_per_task`` slots is held for it by a
``LiteReservation`` (MTurk's accepted assignment), so workers arriving together are not all shown
the task that lacks one answer.
"""

import secrets
from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic, bounded_text
from annotation.corpus.revisions import RevisionCounted
from annotation.pyramids.models import SCU
from scoring.lightweight import DEFAULT_THRESHOLD, AgreementMeasure, BlankPolicy

# Free-text bounds (docs/configuration.md): the guidance crowd workers read above a reference is a
# few paragraphs; a statement is one sentence (the writing page takes 500 characters; imported
# ones up to this).
GUIDANCE_MAX_CHARS = 5_000
STATEMENT_MAX_CHARS = 2_000

ANSWER_PRESENT, ANSWER_ABSENT, ANSWER_BLANK = "p", "n", "b"
# Where crowd work came from (``lightweight_work.CrowdClient``): the client address (an IPv6 one's
# /64) and a hash of the browser session; blank for imported work. Recorded, and counted to share
# a link's slots fairly between addresses; the worker itself is bound by its key (``LiteWorkerKey``),
# so workers behind one address (a lab's NAT) are workers of their own.
CLIENT_CHARS = 64


def client_fields():
    return (
        models.CharField(max_length=CLIENT_CHARS, blank=True, default="", help_text="client address (IPv6: its /64)"),
        models.CharField(max_length=CLIENT_CHARS, blank=True, default="", help_text="hash of the browser session"),
    )


MAX_TASK_STATEMENTS = 64  # app tasks hold 16; an imported aggregated label line may hold more
PROLIFIC_CODE_MAX = 40
PROLIFIC_CODE_PATTERN = r"^[A-Za-z0-9]+$"
PROLIFIC_CODE_MESSAGE = "A Prolific completion code is letters and digits only (as Prolific shows it)."


def _pseudonym_key() -> str:
    return secrets.token_hex(32)


class LightweightPyramid(RevisionCounted, models.Model):
    class Origin(models.TextChoices):
        CROWD = "crowd", "Written by the crowd in the app"
        IMPORTED = "imported", "Imported"
        EXPERT = "expert", "From an expert pyramid's SCU labels"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="lightweight_pyramids")
    name = models.CharField(max_length=200)
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.CROWD)
    guidance = bounded_text(GUIDANCE_MAX_CHARS, blank=True, help_text="Shown to statement writers above the reference.")
    agreement = models.CharField(
        max_length=20, choices=[(m.value, m.value) for m in AgreementMeasure], default=AgreementMeasure.POSITIONAL.value
    )
    threshold = models.FloatField(default=DEFAULT_THRESHOLD, validators=[MinValueValidator(0), MaxValueValidator(1)])
    blank = models.CharField(
        max_length=10, choices=[(b.value, b.value) for b in BlankPolicy], default=BlankPolicy.PRESENT.value
    )
    topic_filter = models.FloatField(
        default=0,
        validators=[MinValueValidator(0), MaxValueValidator(99)],
        help_text="Percent of topics with the lowest crowd alpha left out of the scores.",
    )
    statements_per_writer = models.PositiveSmallIntegerField(default=8)
    writers_per_reference = models.PositiveSmallIntegerField(default=2)
    statements_per_reference = models.PositiveSmallIntegerField(default=4, help_text="Sampled per reference and batch.")
    judges_per_task = models.PositiveSmallIntegerField(default=5)
    seed = models.PositiveIntegerField(default=0, help_text="Seed of the statement sampling (same seed, same sample).")
    pay_writing = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0.50"), help_text="Pay per statement-writing assignment (USD)."
    )
    pay_judging = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0.45"), help_text="Pay per judging assignment (USD)."
    )
    prolific_code = models.CharField(
        max_length=PROLIFIC_CODE_MAX,
        blank=True,
        validators=[RegexValidator(PROLIFIC_CODE_PATTERN, PROLIFIC_CODE_MESSAGE)],
        help_text="The study's completion code on Prolific: Prolific workers are sent back with it when done.",
    )
    verified_only = models.BooleanField(
        default=False,
        help_text="Count only the answers whose completion code was found in the platform's "
        "submissions (as requesters approve assignments before they count).",
    )
    # Keys the worker-id pseudonyms of this run (``lightweight_privacy``); never shown or exported.
    pseudonym_key = models.CharField(max_length=64, default=_pseudonym_key, editable=False)
    workers_pseudonymised_at = models.DateTimeField(null=True, blank=True, editable=False)
    workers_deleted_at = models.DateTimeField(null=True, blank=True, editable=False)
    revision = models.PositiveBigIntegerField(default=0, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset_id", "name"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name"], name="lightweight_unique_name")]

    def __str__(self):
        return f"{self.dataset.name} / {self.name}"


class PlatformSubmission(models.Model):
    """Where a crowd submission came from and whether the platform confirmed it: the worker's
    platform (MTurk, Prolific, or none: an id typed on a shared link), the platform's ids of the
    submission (MTurk's assignmentId and hitId; Prolific's SESSION_ID and STUDY_ID), and when the
    completion code was found among the platform's submissions (``lightweight_codes``)."""

    class Platform(models.TextChoices):
        TYPED = "", "Typed id"
        MTURK = "mturk", "MTurk"
        PROLIFIC = "prolific", "Prolific"

    platform = models.CharField(max_length=10, choices=Platform.choices, default=Platform.TYPED, blank=True)
    platform_assignment = models.CharField(
        max_length=64, blank=True, db_index=True, help_text="MTurk assignmentId / Prolific SESSION_ID"
    )
    platform_task = models.CharField(max_length=64, blank=True, help_text="MTurk hitId / Prolific STUDY_ID")
    verified_at = models.DateTimeField(
        null=True, blank=True, help_text="when the code was found in the platform's submissions"
    )

    class Meta:
        abstract = True


class LiteStatement(models.Model):
    """One statement about a topic: written in the app, imported, or an expert SCU's label."""

    pyramid = models.ForeignKey(LightweightPyramid, on_delete=models.CASCADE, related_name="statements")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="lite_statements")
    external_id = models.CharField(max_length=100, help_text="questionId in the released files")
    text = bounded_text(STATEMENT_MAX_CHARS)
    reference = models.ForeignKey(
        ReferenceSummary, null=True, blank=True, on_delete=models.SET_NULL, related_name="lite_statements"
    )
    source = models.CharField(max_length=200, blank=True, help_text="sourceSummaryId as given")
    author = models.CharField(max_length=100, blank=True, help_text="the writer's worker id, if any")
    writing = models.ForeignKey(
        "LiteWriting", null=True, blank=True, on_delete=models.CASCADE, related_name="statements"
    )
    scu = models.ForeignKey(SCU, null=True, blank=True, on_delete=models.SET_NULL, related_name="lite_statements")
    kept = models.BooleanField(default=True)
    filter_reason = models.CharField(max_length=100, blank=True)
    batch = models.PositiveSmallIntegerField(null=True, blank=True, help_text="1 or 2 once sampled; empty = not judged")

    class Meta:
        ordering = ["pyramid_id", "topic_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["pyramid", "topic", "external_id"], name="lite_statement_unique")
        ]


class LiteWriting(PlatformSubmission):
    """One worker's statement-writing assignment for one reference (phase 1)."""

    pyramid = models.ForeignKey(LightweightPyramid, on_delete=models.CASCADE, related_name="writings")
    reference = models.ForeignKey(ReferenceSummary, on_delete=models.CASCADE, related_name="lite_writings")
    worker_id = models.CharField(max_length=100, blank=True, help_text="empty once the run's worker ids are deleted")
    external_id = models.CharField(max_length=100, blank=True, help_text="MTurk AssignmentId, if imported")
    completion_code = models.CharField(max_length=32, blank=True)
    client, session = client_fields()
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pyramid_id", "reference_id", "submitted_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["pyramid", "reference", "worker_id"],
                condition=~models.Q(worker_id=""),
                name="lite_writing_once",
            )
        ]


class LiteTask(models.Model):
    """One peer summary and its statements (up to 16 in the app), judged by several workers."""

    pyramid = models.ForeignKey(LightweightPyramid, on_delete=models.CASCADE, related_name="tasks")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="lite_tasks")
    peer = models.ForeignKey(PeerSummary, on_delete=models.CASCADE, related_name="lite_tasks")
    batch = models.PositiveSmallIntegerField(default=1)
    key = models.CharField(max_length=64, help_text="identifies the task within the run (statement ids in order)")
    statement_ids = models.JSONField(help_text="LiteStatement ids in the order shown")

    class Meta:
        ordering = ["pyramid_id", "batch", "topic_id", "peer_id", "id"]
        constraints = [models.UniqueConstraint(fields=["pyramid", "peer", "key"], name="lite_task_unique")]


class LiteAssignment(PlatformSubmission):
    """One worker's answers to one task: one of ``p``/``n``/``b`` per task statement."""

    class Origin(models.TextChoices):
        APP = "app", "Judged in the app"
        MTURK = "mturk", "Imported results"
        AGGREGATED = "aggregated", "Released aggregated labels"

    task = models.ForeignKey(LiteTask, on_delete=models.CASCADE, related_name="assignments")
    worker_id = models.CharField(max_length=100, blank=True)
    external_id = models.CharField(max_length=100)
    origin = models.CharField(max_length=12, choices=Origin.choices, default=Origin.APP)
    answers = models.CharField(max_length=MAX_TASK_STATEMENTS)
    completion_code = models.CharField(max_length=32, blank=True)
    client, session = client_fields()  # the hold's, which the answer took the place of
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task_id", "submitted_at", "id"]
        constraints = [models.UniqueConstraint(fields=["task", "external_id"], name="lite_assignment_unique")]
        # A worker's answers (its count on the judging page; whether its first hold is a short one).
        indexes = [models.Index(fields=["worker_id"], name="lite_assignment_worker")]


class LiteReservation(models.Model):
    """A crowd worker's hold on one answer slot of a task while it judges it, until ``expires_at``
    (``LIGHTWEIGHT_RESERVATION_SECONDS`` after the task was first shown, ``CROWD_FIRST_HOLD_SECONDS``
    for a worker that has answered nothing in the run yet; a reload does not renew it): as MTurk
    reserves an assignment when a worker accepts a HIT. A task hands out no more
    slots than its answers and live reservations leave; an address holding more than its fair
    share of a link's slots loses its newest hold to a newcomer (``expires_at`` set to the moment
    it was taken over); an expired reservation holds no slot (it still admits the
    worker's late answer for as long again, then goes with the task's next answer, or becomes the
    worker's new hold if it comes back to the task); the worker's answer deletes it."""

    # No index of its own on the task: the (task, expires_at) index below starts with it (and
    # serves the cascade when a task is deleted).
    task = models.ForeignKey(LiteTask, on_delete=models.CASCADE, related_name="reservations", db_index=False)
    worker_id = models.CharField(max_length=LiteAssignment._meta.get_field("worker_id").max_length)
    client, session = client_fields()  # where it was asked from (the address's fair share)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Worker first: the unique index also finds the worker's own reservations.
        constraints = [models.UniqueConstraint(fields=["worker_id", "task"], name="lite_reservation_once")]
        # "Live reservations of these tasks" (task_id = ? AND expires_at > now) is an index range,
        # and so are a client's live reservations (its caps).
        indexes = [
            models.Index(fields=["task", "expires_at"], name="lite_reservation_live"),
            models.Index(fields=["client", "expires_at"], name="lite_reservation_client"),
            models.Index(fields=["session", "expires_at"], name="lite_reservation_session"),
        ]


class LiteWorkerKey(models.Model):
    """A crowd worker's key in a run: a random secret handed to the browser (or API client) that
    first asked for work under this worker id, stored hashed. Only with it may the id get work or
    answer, so knowing someone's worker id is not enough to answer in their name."""

    pyramid = models.ForeignKey(LightweightPyramid, on_delete=models.CASCADE, related_name="worker_keys")
    worker_id = models.CharField(max_length=LiteAssignment._meta.get_field("worker_id").max_length)
    key_hash = models.CharField(max_length=64)  # SHA-256 of the secret (random: no slow hash needed)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pyramid", "worker_id"], name="lite_worker_key_once")]


# What a crowd link's token looks like (``secrets.token_urlsafe``): the crowd URLs match only this,
# so anything else in the place of a token (a NUL byte, which PostgreSQL refuses) is a 404.
CROWD_TOKEN_PATTERN = r"(?P<token>[-_A-Za-z0-9]{1,64})"


class CrowdLink(models.Model):
    """A shareable link for crowds recruited elsewhere (Prolific, students): the token is the credential,
    and it opens only the statement-writing work or the judging tasks of one batch of one run."""

    class Kind(models.TextChoices):
        WRITING = "writing", "Statement writing"
        JUDGING = "judging", "Judging"

    pyramid = models.ForeignKey(LightweightPyramid, on_delete=models.CASCADE, related_name="links")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    batch = models.PositiveSmallIntegerField(null=True, blank=True)
    token = models.CharField(max_length=64, unique=True, default=secrets.token_urlsafe, editable=False)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pyramid_id", "kind", "batch"]


class LiteResult(models.Model):
    """The stored scores of a run, computed in the background from ``revision`` with ``settings``."""

    pyramid = models.OneToOneField(LightweightPyramid, on_delete=models.CASCADE, related_name="result")
    revision = models.PositiveBigIntegerField()
    settings = models.JSONField()
    payload = models.JSONField()
    computed_at = models.DateTimeField(auto_now=True)

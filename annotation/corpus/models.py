"""What is evaluated: datasets of topics, each with reference and peer summaries."""

from django.conf import settings
from django.core.validators import MaxLengthValidator
from django.db import models

from annotation.corpus.revisions import RevisionCounted

# Bounds of the free texts (every form and serializer checks them through the model field, the
# admin too): a description or narrative is a paragraph or a page; a summary is at most a few
# pages (DUC's have 250 words, ~1,500 characters). docs/configuration.md lists every bound.
DESCRIPTION_MAX_CHARS = 10_000
SUMMARY_MAX_CHARS = 100_000


def bounded_text(limit: int, **kwargs) -> models.TextField:
    """A TextField of at most ``limit`` characters, checked by ``full_clean``, model forms and
    serializers (a TextField's ``max_length`` alone is only a form widget's hint)."""
    return models.TextField(max_length=limit, validators=[MaxLengthValidator(limit)], **kwargs)


class Dataset(models.Model):
    """A collection of topics evaluated together (e.g. "DUC 2006"); the unit of coordination."""

    name = models.CharField(max_length=200, unique=True)
    description = bounded_text(DESCRIPTION_MAX_CHARS, blank=True)
    coordinators = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="coordinated_datasets")
    # Off for a study of how experts build pyramids unaided (construction agreement between
    # experts who all built without proposals): the builder then asks for none and the API refuses them.
    assisted_building = models.BooleanField(
        default=True,
        db_default=True,
        help_text="The pyramid builder proposes contributors and SCUs (turn off for unassisted building).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Topic(RevisionCounted, models.Model):
    """An input to summarise (a DUC document set such as ``D0631``).

    ``revision`` is bumped by every change that can alter any score or agreement figure of the
    topic; stored agreement carries the revision it was computed from, so stale figures are
    recognisable without a flag that could drift.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="topics")
    external_id = models.CharField(max_length=100)
    title = models.CharField(max_length=500, blank=True)
    narrative = bounded_text(DESCRIPTION_MAX_CHARS, blank=True)
    revision = models.PositiveBigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["dataset", "external_id"]
        constraints = [models.UniqueConstraint(fields=["dataset", "external_id"], name="topic_unique_external_id")]

    def __str__(self):
        return f"{self.dataset.name} / {self.external_id}"


class Summary(models.Model):
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="%(class)ss")
    external_id = models.CharField(max_length=100)
    text = bounded_text(SUMMARY_MAX_CHARS)

    class Meta:
        abstract = True
        ordering = ["topic", "external_id"]

    def __str__(self):
        return f"{self.topic.external_id}.{self.external_id}"


class ReferenceSummary(Summary):
    """A human-written model summary; pyramids are built from these (external id e.g. ``A``)."""

    class Meta(Summary.Meta):
        verbose_name_plural = "reference summaries"
        constraints = [models.UniqueConstraint(fields=["topic", "external_id"], name="reference_unique_external_id")]


class PeerSummary(Summary):
    """A summary to evaluate: a system's output, or a held-out human summary."""

    system_id = models.CharField(
        max_length=100, blank=True, help_text="Which system wrote it (defaults to the external id)."
    )

    class Meta(Summary.Meta):
        verbose_name_plural = "peer summaries"
        constraints = [models.UniqueConstraint(fields=["topic", "external_id"], name="peer_unique_external_id")]

    @property
    def system(self) -> str:
        return self.system_of(self.system_id, self.external_id)

    @staticmethod
    def system_of(system_id: str, external_id: str) -> str:
        """The system a peer stands for, from its two columns (readers of ``values_list`` rows)."""
        return system_id or external_id


# Who is asked to do what: assignments of annotators to topics and tasks.


class Assignment(models.Model):
    class Task(models.TextChoices):
        BUILD_PYRAMID = "build_pyramid", "Build pyramid"
        ANNOTATE_PEERS = "annotate_peers", "Annotate peers"

    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Assigned"
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done", "Done"

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    task = models.CharField(max_length=20, choices=Task.choices)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ASSIGNED)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic", "task", "annotator"]
        constraints = [models.UniqueConstraint(fields=["topic", "annotator", "task"], name="assignment_unique")]

    def __str__(self):
        return f"{self.annotator} — {self.get_task_display()} — {self.topic}"

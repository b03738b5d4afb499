"""Pyramids: SCUs made of contributors, each a (possibly discontinuous) span of one reference."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.deconstruct import deconstructible

from annotation.corpus.models import ReferenceSummary, Topic
from annotation.corpus.revisions import RevisionCounted
from annotation.pyramids.spans import Span, validate_span


class Pyramid(RevisionCounted, models.Model):
    """A pyramid of SCUs built by one annotator from some (usually all) references of a topic.

    ``revision`` is bumped by every change to its SCUs, contributors or parts (they change weights,
    hence every score computed against it).
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done", "Done"

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="pyramids")
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="pyramids"
    )
    references = models.ManyToManyField(
        ReferenceSummary, related_name="pyramids", help_text="The reference summaries this pyramid is built from."
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    source = models.CharField(max_length=500, blank=True, help_text="Where it came from, e.g. the imported file name.")
    revision = models.PositiveBigIntegerField(default=0, editable=False)
    last_uid = models.PositiveIntegerField(
        default=0,
        editable=False,
        help_text="Highest SCU uid ever given out: uids are never reused, so history stays unambiguous.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["topic", "id"]

    def __str__(self):
        who = self.creator.username if self.creator_id else "unknown"
        return f"Pyramid {self.pk} of {self.topic.external_id} by {who}"


@deconstructible
class LengthBound:
    """At most ``settings.<setting>`` characters (``LABEL_MAX_LENGTH``, ``COMMENT_MAX_LENGTH``).

    A model validator, so the API's serializers check it too; the services and the importers,
    which write without ``full_clean``, call :meth:`problem`. The bound is read when checking: it
    is a setting, not a column size, so raising it needs no migration."""

    def __init__(self, setting: str, what: str):
        self.setting, self.what = setting, what

    def problem(self, value: str) -> str | None:
        limit = getattr(settings, self.setting)
        if len(value) <= limit:
            return None
        return f"The {self.what} has {len(value):,} characters; at most {limit:,} are allowed."

    def __call__(self, value: str) -> None:
        problem = self.problem(value)
        if problem is not None:
            raise ValidationError(problem, code="max_length")

    def __eq__(self, other):
        return isinstance(other, LengthBound) and (self.setting, self.what) == (other.setting, other.what)


LABEL_LENGTH = LengthBound("LABEL_MAX_LENGTH", "label")
# Provenance (issue 30): a study compares assisted and unassisted building, so what the expert took
# from the builder's proposals is kept, whatever was changed in it afterwards.
PROPOSED_HELP = "Made by accepting a proposal of the assisted builder (the expert may have changed it since)."
COMMENT_LENGTH = LengthBound("COMMENT_MAX_LENGTH", "comment")


class SCU(models.Model):
    """A Summary Content Unit. Its weight is derived from its contributors, never stored."""

    pyramid = models.ForeignKey(Pyramid, on_delete=models.CASCADE, related_name="scus")
    uid = models.PositiveIntegerField(help_text="Identifier within the pyramid (DUCView uid; 0 is reserved).")
    label = models.TextField(validators=[LABEL_LENGTH])
    comment = models.TextField(blank=True, validators=[COMMENT_LENGTH])
    proposed = models.BooleanField(default=False, db_default=False, help_text=PROPOSED_HELP)

    class Meta:
        verbose_name = "SCU"
        ordering = ["pyramid", "uid"]
        constraints = [
            models.UniqueConstraint(fields=["pyramid", "uid"], name="scu_unique_uid"),
            models.CheckConstraint(
                condition=Q(uid__gt=0),
                name="scu_uid_positive",
                violation_error_message="SCU uid 0 is reserved for non-matching content.",
            ),
        ]

    def __str__(self):
        return f"SCU {self.uid}: {self.label[:60]}"


class Contributor(models.Model):
    """The words of one reference summary that express an SCU.

    ``legacy_issue`` is non-empty only for contributors imported from legacy files that break the
    one-contributor-per-reference rule (kept so official scores reproduce); the database rejects a
    second ordinary contributor from the same reference in one SCU.
    """

    scu = models.ForeignKey(SCU, on_delete=models.CASCADE, related_name="contributors")
    reference = models.ForeignKey(ReferenceSummary, on_delete=models.CASCADE, related_name="contributors")
    comment = models.TextField(blank=True, validators=[COMMENT_LENGTH])
    legacy_issue = models.CharField(
        max_length=500, blank=True, help_text="Why this imported contributor breaks the rules."
    )
    review_note = models.CharField(
        max_length=500,
        blank=True,
        help_text=(
            "Why an imported contributor needs a look, e.g. a part kept at the file's offsets because its "
            "label was not found."
        ),
    )
    proposed = models.BooleanField(default=False, db_default=False, help_text=PROPOSED_HELP)

    class Meta:
        ordering = ["scu", "reference__external_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["scu", "reference"],
                condition=Q(legacy_issue=""),
                name="contributor_one_per_reference",
                violation_error_message="This SCU already has a contributor from that reference summary.",
            ),
        ]

    def __str__(self):
        return f"Contributor of SCU {self.scu.uid} from {self.reference.external_id}"

    @property
    def label(self) -> str:
        """DUCView's contributor label: its parts' texts in text order joined with '...'."""
        parts = sorted(self.parts.all(), key=lambda p: (p.reference_id != self.reference_id, p.start))
        return "...".join(p.text for p in parts)

    def clean(self):
        if self.scu_id and self.reference_id and self.reference.topic_id != self.scu.pyramid.topic_id:
            raise ValidationError(
                {"reference": "The reference summary belongs to another topic than the SCU's pyramid."}
            )
        if self.scu_id and self.reference_id and not self.legacy_issue:
            twins = Contributor.objects.filter(
                scu_id=self.scu_id, reference_id=self.reference_id, legacy_issue=""
            ).exclude(pk=self.pk)
            if twins.exists():
                raise ValidationError(
                    {
                        "reference": f"SCU {self.scu.uid} already has a contributor from reference "
                        f"{self.reference.external_id}."
                    }
                )


class ContributorPart(Span):
    """One continuous span of a contributor in a reference summary's text.

    ``reference`` repeats the contributor's reference (a legacy DUC contributor has parts in two
    references); the database checks that it lies in the same topic and inside the text.
    """

    contributor = models.ForeignKey(Contributor, on_delete=models.CASCADE, related_name="parts")
    reference = models.ForeignKey(ReferenceSummary, on_delete=models.CASCADE, related_name="contributor_parts")

    def __str__(self):
        return f"[{self.start}, {self.end}) of {self.reference.external_id}"

    @property
    def text(self) -> str:
        return self.text_of(self.reference.text)

    def clean(self):
        if self.reference_id:
            validate_span(self.start, self.end, self.reference.text, f"Part of reference {self.reference.external_id}")
        if self.contributor_id and self.reference_id:
            contributor = self.contributor
            if self.reference_id != contributor.reference_id and not contributor.legacy_issue:
                raise ValidationError({"reference": "A part must lie in its contributor's reference summary."})


class PyramidAgreement(models.Model):
    """Construction agreement of a topic's pyramids (``annotation.pyramids.construction``), stored
    by the background job like ``TopicAgreement``: tagged with the topic revision it was computed
    from (every change to a pyramid, a peer annotation or a reference of the topic bumps it, and
    the practical test rests on the annotations), and written only if nothing newer is stored."""

    topic = models.OneToOneField(Topic, on_delete=models.CASCADE, related_name="pyramid_agreement")
    topic_revision = models.PositiveBigIntegerField()
    pyramid_revisions = models.JSONField(help_text="pyramid id -> revision, of the pyramids compared")
    values = models.JSONField()
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Pyramid construction agreement of {self.topic}"

    @property
    def is_current(self) -> bool:
        """Computed from the topic as it is, by the algorithm of today (rows of an older one are
        recomputed: ``construction.stale_topics``). The alignment's module is imported here, not
        with the models: every process loads the models, few compare pyramids."""
        from scoring.pyramid_agreement import ALGORITHM

        return self.topic_revision == self.topic.revision and self.values.get("algorithm") == ALGORITHM

"""Peer annotations: which SCUs a peer summary expresses, with the peer spans as evidence."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from annotation.corpus.models import PeerSummary, Topic
from annotation.corpus.revisions import RevisionCounted
from annotation.pyramids.models import SCU, Pyramid
from annotation.pyramids.spans import Span, validate_span


class PeerAnnotation(RevisionCounted, models.Model):
    """One annotator's reading of one peer against one pyramid.

    The count of non-matching units is derived (matches without an SCU), like weights, so it can
    never disagree with the evidence. ``revision`` is bumped by every change to its matches.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done", "Done"

    peer = models.ForeignKey(PeerSummary, on_delete=models.CASCADE, related_name="annotations")
    pyramid = models.ForeignKey(Pyramid, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="peer_annotations"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    source = models.CharField(max_length=500, blank=True, help_text="Where it came from, e.g. the imported file name.")
    revision = models.PositiveBigIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["peer", "annotator", "id"]
        constraints = [
            models.UniqueConstraint(fields=["peer", "pyramid", "annotator"], name="annotation_unique_per_annotator"),
        ]

    def __str__(self):
        who = self.annotator.username if self.annotator_id else "unknown"
        return f"Annotation of peer {self.peer} by {who}"

    def clean(self):
        if self.peer_id and self.pyramid_id and self.peer.topic_id != self.pyramid.topic_id:
            raise ValidationError({"pyramid": "The pyramid belongs to another topic than the peer summary."})


class PeerMatch(models.Model):
    """The peer expresses ``scu`` here (several matches of one SCU are repetitions).

    A match without an SCU is a non-matching content unit (counted by the original score). An
    imported match keeps what its file's tool scored even when its evidence could not be placed
    (``review_note`` says so, and the annotator shows it); it may then have no part.
    """

    annotation = models.ForeignKey(PeerAnnotation, on_delete=models.CASCADE, related_name="matches")
    scu = models.ForeignKey(SCU, null=True, blank=True, on_delete=models.CASCADE, related_name="peer_matches")
    review_note = models.CharField(
        max_length=500,
        blank=True,
        help_text=(
            "Why an imported match needs a look, e.g. its evidence kept at the file's offsets because its "
            "label was not found."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "peer matches"
        ordering = ["annotation", "id"]

    def __str__(self):
        return f"Match of SCU {self.scu.uid}" if self.scu_id else "Non-matching unit"

    def clean(self):
        if self.scu_id and self.annotation_id and self.scu.pyramid_id != self.annotation.pyramid_id:
            raise ValidationError({"scu": f"SCU {self.scu.uid} belongs to another pyramid than the annotation's."})


class PeerMatchPart(Span):
    """One continuous span of the peer summary's text that is evidence for a match."""

    match = models.ForeignKey(PeerMatch, on_delete=models.CASCADE, related_name="parts")

    def __str__(self):
        return f"[{self.start}, {self.end})"

    @property
    def text(self) -> str:
        return self.text_of(self.match.annotation.peer.text)

    def clean(self):
        if self.match_id:
            validate_span(self.start, self.end, self.match.annotation.peer.text, "Part of the peer summary")


# Stored results of background computations, tagged with the revisions they were computed from.
#
# A result is current only while those revisions are still the live ones; a task writes its result
# only if it is not older than what is stored, so a slow task can never overwrite a newer figure.


class AnnotationScore(models.Model):
    annotation = models.ForeignKey(PeerAnnotation, on_delete=models.CASCADE, related_name="scores")
    convention = models.CharField(max_length=20)
    pyramid_revision = models.PositiveBigIntegerField()
    annotation_revision = models.PositiveBigIntegerField()
    values = models.JSONField()
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["annotation", "convention"], name="score_unique_per_convention")]

    def __str__(self):
        return f"{self.convention} score of {self.annotation_id}"

    @property
    def is_current(self) -> bool:
        a = self.annotation
        return self.annotation_revision == a.revision and self.pyramid_revision == a.pyramid.revision


class TopicAgreement(models.Model):
    topic = models.OneToOneField(Topic, on_delete=models.CASCADE, related_name="agreement")
    topic_revision = models.PositiveBigIntegerField()
    values = models.JSONField()
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Agreement of {self.topic}"

    @property
    def is_current(self) -> bool:
        return self.topic_revision == self.topic.revision

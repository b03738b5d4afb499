"""Stored results of background computations, tagged with the revisions they were computed from.

A result is current only while those revisions are still the live ones; a task writes its result
only if it is not older than what is stored, so a slow task can never overwrite a newer figure.
"""
from django.db import models

from .corpus import Topic
from .peer import PeerAnnotation


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

"""The records that make a peer annotation an adjudicated version (``Adjudication``) and a pyramid
the topic's adjudicated pyramid (``PyramidAdjudication``, below).

The adjudicated version is an ordinary ``PeerAnnotation`` (so scoring, exports and the editor read
it like any other) without an annotator: it is nobody's own work, so the blind rule of annotations
(``access/rules.py``: an annotator sees only annotations whose annotator they are) keeps it, its
matches and its scores from every annotator, and agreement (over annotators' versions only) never
includes it. This row says who adjudicated, from which annotators' versions, and what was decided.
"""

from django.conf import settings
from django.db import models

from annotation.peers.models import PeerAnnotation


class Adjudication(models.Model):
    annotation = models.OneToOneField(
        PeerAnnotation,
        on_delete=models.CASCADE,
        related_name="adjudication",
        help_text="The adjudicated version (no annotator).",
    )
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="adjudications"
    )
    sources = models.ManyToManyField(
        PeerAnnotation, related_name="adjudicated_in", help_text="The annotators' versions it settles (left unchanged)."
    )
    decisions = models.JSONField(default=dict, help_text="What was decided: SCU uid (or 'non_matching') -> choice.")
    source_revisions = models.JSONField(
        default=dict,
        help_text=("Source annotation id -> its revision when adjudicated: a source changed since is shown as such."),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"Adjudication of annotation {self.annotation_id}"

    def changed_sources(self, comparison) -> list[str]:
        """The annotators whose version changed (or appeared) since this adjudication was saved."""
        return [s.annotator for s in comparison.sources if self.source_revisions.get(str(s.pk)) != s.revision]


class PyramidAdjudication(models.Model):
    """The record that makes a pyramid the topic's adjudicated pyramid (``adjudication/pyramids.py``).

    The adjudicated pyramid is an ordinary ``Pyramid`` without a creator (nobody's own work: no
    builder ever sees it, ``access/rules.py``); finished, so annotators of peers annotate against
    it. One per topic; scores of the topic rest on it (``peers.results.counting``)."""

    topic = models.OneToOneField(
        "annotation.Topic",
        on_delete=models.CASCADE,
        related_name="pyramid_adjudication",
        help_text="One adjudicated pyramid per topic.",
    )
    pyramid = models.OneToOneField(
        "annotation.Pyramid",
        on_delete=models.CASCADE,
        related_name="pyramid_adjudication",
        help_text="The adjudicated pyramid (no creator).",
    )
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="pyramid_adjudications"
    )
    sources = models.ManyToManyField(
        "annotation.Pyramid",
        related_name="adjudicated_into",
        help_text="The annotators' pyramids it settles (left unchanged).",
    )
    decisions = models.JSONField(
        default=dict, help_text="What was decided: item key (m<uid A>-<uid B>, a<uid>, b<uid>) -> choice."
    )
    uids = models.JSONField(
        default=dict, help_text="Item key -> the uid of the SCU it became: kept when adjudicated again."
    )
    source_order = models.JSONField(
        default=list,
        blank=True,
        help_text=(
            "[pyramid A, pyramid B]: the sides the item keys name (which annotator SCU became which adjudicated SCU)."
        ),
    )
    source_revisions = models.JSONField(
        default=dict,
        help_text=("Source pyramid id -> its revision when adjudicated: a source changed since is shown as such."),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"Adjudicated pyramid {self.pyramid_id} of topic {self.topic_id}"

    def changed_sources(self) -> list[int]:
        """The source pyramids changed since this adjudication was saved."""
        return [p.pk for p in self.sources.all() if self.source_revisions.get(str(p.pk)) != p.revision]

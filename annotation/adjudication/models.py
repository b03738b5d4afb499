"""The record that makes a peer annotation an adjudicated version.

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
    annotation = models.OneToOneField(PeerAnnotation, on_delete=models.CASCADE, related_name="adjudication",
                                      help_text="The adjudicated version (no annotator).")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="adjudications")
    sources = models.ManyToManyField(PeerAnnotation, related_name="adjudicated_in",
                                     help_text="The annotators' versions it settles (left unchanged).")
    decisions = models.JSONField(default=dict, help_text="What was decided: SCU uid (or 'non_matching') -> choice.")
    source_revisions = models.JSONField(default=dict, help_text=(
        "Source annotation id -> its revision when adjudicated: a source changed since is shown as such."))
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"Adjudication of annotation {self.annotation_id}"

    def changed_sources(self, comparison) -> list[str]:
        """The annotators whose version changed (or appeared) since this adjudication was saved."""
        return [s.annotator for s in comparison.sources if self.source_revisions.get(str(s.pk)) != s.revision]

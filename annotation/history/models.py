"""The audit history of pyramids and peer annotations, and the basis of undo/redo.

Each user action records what it touched, before and after: for a pyramid the states of the SCUs
it touched (by uid, which is stable), for a peer annotation the whole list of matches (small).
Undo re-applies ``before`` and redo ``after``, only while the touched objects are still as the
action left them, so an undo never silently destroys someone else's later work.

The documents are named by Django's lazy references ("annotation.Pyramid"): the history is a layer
below pyramids and peer annotations (``pyproject.toml``'s layer order) and imports neither.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class Change(models.Model):
    class UndoState(models.TextChoices):
        APPLIED = "applied", "Applied"  # on the user's undo stack
        UNDONE = "undone", "Undone"  # on the user's redo stack
        DISCARDED = "discarded", "Discarded"  # undone, then superseded by a new action
        NONE = "", "Not undoable"  # undo/redo records themselves

    pyramid = models.ForeignKey(
        "annotation.Pyramid", null=True, blank=True, on_delete=models.CASCADE, related_name="changes"
    )
    annotation = models.ForeignKey(
        "annotation.PeerAnnotation", null=True, blank=True, on_delete=models.CASCADE, related_name="changes"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=40)
    summary = models.CharField(max_length=500)
    before = models.JSONField()
    after = models.JSONField()
    revision = models.PositiveBigIntegerField(help_text="The pyramid's or annotation's revision after the change.")
    undo_state = models.CharField(max_length=10, choices=UndoState.choices, blank=True, default=UndoState.APPLIED)
    reverts = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="For undo/redo records: the change undone or redone.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["pyramid", "revision"]), models.Index(fields=["annotation", "revision"])]
        constraints = [
            models.CheckConstraint(
                condition=(Q(pyramid__isnull=False) & Q(annotation__isnull=True))
                | (Q(pyramid__isnull=True) & Q(annotation__isnull=False)),
                name="change_has_one_target",
            ),
        ]

    def __str__(self):
        return f"{self.action}: {self.summary}"

"""Who is asked to do what: assignments of annotators to topics and tasks."""
from django.conf import settings
from django.db import models

from .corpus import Topic


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
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic", "task", "annotator"]
        constraints = [models.UniqueConstraint(fields=["topic", "annotator", "task"], name="assignment_unique")]

    def __str__(self):
        return f"{self.annotator} — {self.get_task_display()} — {self.topic}"

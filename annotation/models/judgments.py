"""Judgments imported from elsewhere (content responsiveness, linguistic quality, ROUGE...).

The pyramid score is meta-evaluated against them (``scoring.metaeval``). A judgment is keyed by the
summary's external id rather than a foreign key because it may concern a peer OR a reference
summary (two tables), and an import must not depend on which of the two the id names; the import
service checks that the id names exactly one summary of the topic.
"""
from django.db import models

from .corpus import Topic


class Judgment(models.Model):
    """One value of one metric for one summary of a topic (one per topic, summary and metric)."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="judgments")
    summary = models.CharField(max_length=100, help_text="External id of the peer or reference summary judged.")
    metric = models.CharField(max_length=100, help_text="e.g. content_responsiveness")
    value = models.FloatField()
    source = models.CharField(max_length=500, blank=True, help_text="Where it came from, e.g. the imported file name.")

    class Meta:
        ordering = ["topic", "metric", "summary"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "summary", "metric"], name="judgment_unique_per_summary_metric"),
        ]

    def __str__(self):
        return f"{self.metric} of {self.topic.external_id}.{self.summary} = {self.value:g}"

"""The coordinator dashboards' figures of one dataset, computed in the background and stored.

A snapshot carries the fingerprint of the state it was computed from (topic revisions, what each
topic holds, the judgments) and the moment that state was read (``state_at``). It is current only
while its fingerprint equals the live one (``annotation.dashboards.snapshots``), and a task
writes its snapshot only if the stored one was read from an older state, so a slow task never
overwrites a newer snapshot (as ``AnnotationScore`` and ``TopicAgreement`` do with revisions).
"""

import json

from django.db import models

from annotation.corpus.models import Dataset, Topic
from annotation.jobs.kept import Kept

# Decoded payloads of this process: snapshot pk -> (its computed_at, the decoded payload); one entry
# per dataset's snapshot, replaced when a newer one is decoded (``DatasetDashboard.data``), at most
# DECODED_SNAPSHOTS datasets (the least recently read leaves first): DUC 2006's takes ~3 MB.
DECODED_SNAPSHOTS = 8
_decoded = Kept(DECODED_SNAPSHOTS)


class DatasetDashboard(models.Model):
    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, related_name="dashboard")
    payload = models.TextField(
        help_text="Every figure the dashboard pages show, as JSON text (see dashboard_snapshots). "
        "Text rather than jsonb so rows keep their keys' order (downloads equal the exports)."
    )
    fingerprint = models.JSONField(help_text="The state the figures were computed from.")
    state_at = models.DateTimeField(help_text="When that state was read (orders snapshots: newer never overwritten).")
    computed_at = models.DateTimeField(auto_now=True)

    @property
    def data(self) -> dict:
        """The payload decoded, once per stored payload and process: every page of a dataset reads
        its snapshot, and decoding DUC 2006's (~1 MB of JSON) took 5-10 ms of each request.

        Shared by every request of the process, so never change what it returns. Keyed by the
        snapshot and its ``computed_at``, which ``snapshots.store`` sets anew with every payload it
        writes: a newer snapshot is never answered with an older decoding. A snapshot read with
        ``defer("payload")`` (``snapshots.snapshot_for``) reads its payload only when this process
        has not decoded it yet, with its ``computed_at`` in the same query (the key then names the
        payload read, even if a newer one was stored since the row was first read)."""
        if self.pk is None:
            return json.loads(self.payload)
        found = _decoded.get(self.pk)
        if found is not None and found[0] == self.computed_at:
            return found[1]
        if "payload" in self.get_deferred_fields():
            self.refresh_from_db(fields=["payload", "computed_at"])
        data = json.loads(self.payload)
        _decoded.put(self.pk, (self.computed_at, data))
        return data

    def __str__(self):
        return f"Dashboard of {self.dataset}"


# Judgments imported from elsewhere (content responsiveness, linguistic quality, ROUGE...).
#
# The pyramid score is meta-evaluated against them (``scoring.metaeval``). A judgment is keyed by the
# summary's external id rather than a foreign key because it may concern a peer OR a reference
# summary (two tables), and an import must not depend on which of the two the id names; the import
# service checks that the id names exactly one summary of the topic.


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

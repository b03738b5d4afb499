"""The coordinator dashboards' figures of one dataset, computed in the background and stored.

A snapshot carries the fingerprint of the state it was computed from (topic revisions, what each
topic holds, the judgments) and the moment that state was read (``state_at``). It is current only
while its fingerprint equals the live one (``annotation.services.dashboard_snapshots``), and a task
writes its snapshot only if the stored one was read from an older state, so a slow task never
overwrites a newer snapshot (as ``AnnotationScore`` and ``TopicAgreement`` do with revisions).
"""
import json

from django.db import models

from .corpus import Dataset


class DatasetDashboard(models.Model):
    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, related_name="dashboard")
    payload = models.TextField(help_text="Every figure the dashboard pages show, as JSON text (see dashboard_snapshots). "
                                         "Text rather than jsonb so rows keep their keys' order (downloads equal the exports).")
    fingerprint = models.JSONField(help_text="The state the figures were computed from.")
    state_at = models.DateTimeField(help_text="When that state was read (orders snapshots: newer never overwritten).")
    computed_at = models.DateTimeField(auto_now=True)

    @property
    def data(self) -> dict:
        """The payload decoded (once per payload text)."""
        cached = self.__dict__.get("_data")
        if cached is None or cached[0] is not self.payload:
            cached = (self.payload, json.loads(self.payload))
            self.__dict__["_data"] = cached
        return cached[1]

    def __str__(self):
        return f"Dashboard of {self.dataset}"

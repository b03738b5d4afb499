"""The revision counter of the documents whose stored results are stamped with it (topics,
pyramids, peer annotations, lightweight runs).

A revision only moves forward, by ``UPDATE ... SET revision = revision + 1`` (``score_events``).
A model's plain ``save()`` writes every field, so an instance loaded before such a bump (a status
change, a rename) would write its old revision back; the result computed for the newer revision
would then match no revision the row ever has again, and the document would read stale forever.
``RevisionCounted.save`` leaves the counter out of every UPDATE it makes.
"""


class RevisionCounted:
    """Mixed into a model with a ``revision`` field that only ``score_events`` may move."""

    def save(self, *args, **kwargs):
        if not self._state.adding and kwargs.get("update_fields") is None:
            deferred = self.get_deferred_fields()
            kwargs["update_fields"] = [
                field.name
                for field in self._meta.concrete_fields
                if not field.primary_key and field.name != "revision" and field.attname not in deferred
            ]
        super().save(*args, **kwargs)

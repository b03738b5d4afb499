"""Validation shared by every span model (contributor parts and peer-match parts).

Offsets are 0-based, end-exclusive, counted in Unicode code points of the stored text (Python's
``str`` indexing). The browser converts its UTF-16 offsets before they reach the server.
"""

from django.core.exceptions import ValidationError
from django.db import models

# Parts of one contributor or one peer match. DUC 2006/2007 never has more than 5; the bound keeps
# one request's work small (2,000 parts in a request took 17 s, 10,000 killed the worker).
MAX_PARTS = 50


def validate_span(start, end, text: str, what: str) -> None:
    """Raise a ValidationError naming ``what`` when [start, end) is not a non-empty span of text."""
    errors = {}
    if start is None or end is None:
        raise ValidationError({"start": f"{what}: start and end are required."})
    if start < 0:
        errors["start"] = f"{what}: start {start} is negative."
    if end > len(text):
        errors["end"] = f"{what}: end {end} is past the end of the text ({len(text)} characters)."
    if start >= end:
        errors.setdefault("end", f"{what}: the span [{start}, {end}) is empty or reversed (start must be < end).")
    if errors:
        raise ValidationError(errors)


class Span(models.Model):
    """Abstract [start, end) span; the database rejects negative, empty and reversed spans."""

    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        abstract = True
        ordering = ["start", "end"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(end__gt=models.F("start")),
                name="%(app_label)s_%(class)s_nonempty",
                violation_error_message="A part must end after it starts.",
            ),
        ]

    def text_of(self, text: str) -> str:
        return text[self.start : self.end]

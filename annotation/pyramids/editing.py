"""Editing use cases: each validates everything first and writes inside one transaction.

Model ``clean`` methods hold the rules (with messages that name the field); these functions make
sure a multi-row change (a contributor and its parts) is written whole or not at all. The database
triggers are the last line behind them. A peer's match is written the same way by
``annotation.peers.editing``, which is above this layer and uses its two checks.
"""

from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.corpus.models import ReferenceSummary
from annotation.pyramids.models import SCU, Contributor, ContributorPart

Spans = Sequence[tuple[int, int]]


def require_spans(spans: Spans) -> None:
    if not spans:
        raise ValidationError({"parts": "At least one span is required."})


def validate_held(obj, *, held: Sequence[str], constraints: bool = True) -> None:
    """``full_clean`` without re-checking that the rows in ``held`` exist: the caller passes
    instances it read (an action, under the document's lock), and each check costs a query. The
    model's ``clean`` still runs whole. ``constraints=False`` for spans, whose one constraint
    (end > start) ``clean`` checks first (``validate_span``); the database enforces it anyway."""
    obj.full_clean(exclude=held, validate_constraints=constraints)


# Each use case in its own savepoint inside a caller's transaction: a refused input (ValidationError,
# IntegrityError) leaves nothing behind and the caller's transaction usable (importers and tests go
# on after a refusal); without it the whole outer transaction would be doomed.
@transaction.atomic
def add_contributor(
    scu: SCU, reference: ReferenceSummary, spans: Spans, comment: str = "", *, proposed: bool = False
) -> Contributor:
    """A new contributor of ``scu`` from ``reference`` with one part per span (several = discontinuous);
    ``proposed``: an accepted proposal of the assisted builder (its provenance)."""
    require_spans(spans)
    contributor = Contributor(scu=scu, reference=reference, comment=comment, proposed=proposed)
    # Its conditional unique constraint (one contributor per reference) is what clean() checks.
    validate_held(contributor, held=["scu", "reference"])
    contributor.save()
    for start, end in spans:
        add_part(contributor, start, end)
    return contributor


@transaction.atomic
def add_part(contributor: Contributor, start: int, end: int) -> ContributorPart:
    """One more span of an existing contributor, in its own reference."""
    part = ContributorPart(contributor=contributor, reference=contributor.reference, start=start, end=end)
    validate_held(part, held=["contributor", "reference"], constraints=False)
    part.save()
    return part

"""Editing use cases: each validates everything first and writes inside one transaction.

Model ``clean`` methods hold the rules (with messages that name the field); these functions make
sure a multi-row change (a contributor and its parts, a match and its spans) is written whole or
not at all. The database triggers are the last line behind them.
"""
from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.corpus.models import ReferenceSummary
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import Contributor, ContributorPart, SCU

Spans = Sequence[tuple[int, int]]


def _require_spans(spans: Spans) -> None:
    if not spans:
        raise ValidationError({"parts": "At least one span is required."})


def _validate(obj, *, held: Sequence[str], constraints: bool = True) -> None:
    """``full_clean`` without re-checking that the rows in ``held`` exist: the caller passes
    instances it read (an action, under the document's lock), and each check costs a query. The
    model's ``clean`` still runs whole. ``constraints=False`` for spans, whose one constraint
    (end > start) ``clean`` checks first (``validate_span``); the database enforces it anyway."""
    obj.full_clean(exclude=held, validate_constraints=constraints)


# Each use case in its own savepoint inside a caller's transaction: a refused input (ValidationError,
# IntegrityError) leaves nothing behind and the caller's transaction usable (importers and tests go
# on after a refusal); without it the whole outer transaction would be doomed.
@transaction.atomic
def add_contributor(scu: SCU, reference: ReferenceSummary, spans: Spans, comment: str = "") -> Contributor:
    """A new contributor of ``scu`` from ``reference`` with one part per span (several = discontinuous)."""
    _require_spans(spans)
    contributor = Contributor(scu=scu, reference=reference, comment=comment)
    # Its conditional unique constraint (one contributor per reference) is what clean() checks.
    _validate(contributor, held=["scu", "reference"])
    contributor.save()
    for start, end in spans:
        add_part(contributor, start, end)
    return contributor


@transaction.atomic
def add_part(contributor: Contributor, start: int, end: int) -> ContributorPart:
    """One more span of an existing contributor, in its own reference."""
    part = ContributorPart(contributor=contributor, reference=contributor.reference, start=start, end=end)
    _validate(part, held=["contributor", "reference"], constraints=False)
    part.save()
    return part


@transaction.atomic
def add_match(annotation: PeerAnnotation, scu: SCU | None, spans: Spans) -> PeerMatch:
    """The peer expresses ``scu`` at these spans (``scu=None``: a non-matching content unit)."""
    _require_spans(spans)
    match = PeerMatch(annotation=annotation, scu=scu)
    _validate(match, held=["annotation", "scu"])
    match.save()
    for start, end in spans:
        part = PeerMatchPart(match=match, start=start, end=end)
        _validate(part, held=["match"], constraints=False)
        part.save()
    return match

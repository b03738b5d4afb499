"""Writing a peer's match and its spans whole or not at all, as ``annotation.pyramids.editing``
writes a contributor and its parts (the same checks: a match is a peer annotation's row, so it is
written here, in the layer that owns peer annotations)."""

from django.db import transaction

from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.editing import Spans, require_spans, validate_held
from annotation.pyramids.models import SCU


@transaction.atomic
def add_match(annotation: PeerAnnotation, scu: SCU | None, spans: Spans) -> PeerMatch:
    """The peer expresses ``scu`` at these spans (``scu=None``: a non-matching content unit)."""
    require_spans(spans)
    match = PeerMatch(annotation=annotation, scu=scu)
    validate_held(match, held=["annotation", "scu"])
    match.save()
    for start, end in spans:
        part = PeerMatchPart(match=match, start=start, end=end)
        validate_held(part, held=["match"], constraints=False)
        part.save()
    return match

"""Writing a peer's match and its spans whole or not at all, as ``annotation.pyramids.editing``
writes a contributor and its parts (the same checks: a match is a peer annotation's row, so it is
written here, in the layer that owns peer annotations)."""

from django.db import transaction

from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.editing import Spans, require_spans, validate_held
from annotation.pyramids.models import SCU


@transaction.atomic
def add_match(annotation: PeerAnnotation, scu: SCU | None, spans: Spans) -> PeerMatch:
    """The peer expresses ``scu`` at these spans (``scu=None``: a non-matching content unit), in a
    savepoint of its own inside a caller's transaction: a refused input leaves nothing behind and
    the caller's transaction usable (``pyramids.editing`` says why)."""
    return write_match(annotation, scu, spans)


def write_match(annotation: PeerAnnotation, scu: SCU | None, spans: Spans) -> PeerMatch:
    """``add_match`` without a savepoint of its own, for an editing action (``actions.match_span``),
    whose savepoint (``history.changes.annotation_action``) already makes the match whole or
    nothing: the annotator's save is two statements fewer (SAVEPOINT, RELEASE). The parts written
    are kept on the match (``written_parts``, in the order ``full`` gives them): the API answers
    the save with them instead of reading them back."""
    require_spans(spans)
    match = PeerMatch(annotation=annotation, scu=scu)
    validate_held(match, held=["annotation", "scu"])
    match.save()
    written = []
    for start, end in spans:
        part = PeerMatchPart(match=match, start=start, end=end)
        validate_held(part, held=["match"], constraints=False)
        part.save()
        written.append(part)
    match.written_parts = sorted(written, key=lambda p: (p.start, p.end))  # the answer's, not read again
    return match

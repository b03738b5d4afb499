"""What an annotator does to a peer annotation: match spans to SCUs, mark non-matching content.

Like the pyramid actions, each runs on the locked annotation, checks the client's revision and
is recorded for the audit history and undo/redo.
"""

from django.core.exceptions import ValidationError

from annotation.history.changes import Outcome, annotation_action, reread
from annotation.peers.editing import write_match
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.pyramids.editing import Spans
from annotation.pyramids.models import SCU


def _describe(scu: SCU | None) -> str:
    return f"SCU {scu.uid}" if scu else "a non-matching unit"


def match_span(annotation: PeerAnnotation, user, *, scu: SCU | None, spans: Spans, expected_revision=None) -> Outcome:
    """The peer expresses ``scu`` at these spans (again: a repetition); ``scu=None``: non-matching content."""
    return annotation_action(
        annotation.pk,
        user,
        action="add_match",
        mutate=lambda a: write_match(a, scu, spans),
        summary=lambda m: f"Matched {_describe(scu)}",
        expected_revision=expected_revision,
    )


def accept_matches(
    annotation: PeerAnnotation, user, *, matches: list[tuple[SCU, Spans]], expected_revision=None
) -> Outcome:
    """Several matches made at once (Autoannotate's reviewed suggestions accepted with one key): one
    action, so one revision and one undo step; all are written or none."""

    def mutate(a):
        return [write_match(a, scu, spans) for scu, spans in matches]

    return annotation_action(
        annotation.pk,
        user,
        action="accept_matches",
        mutate=mutate,
        summary=lambda made: f"Accepted {len(made)} suggested match{'es' if len(made) != 1 else ''}",
        expected_revision=expected_revision,
    )


def remove_match(match: PeerMatch, user, *, expected_revision=None) -> Outcome:
    fresh = {}

    def mutate(annotation):
        fresh["match"] = reread(match)  # under the lock: a concurrent delete is seen
        fresh["scu"] = fresh["match"].scu
        fresh["match"].delete()

    return annotation_action(
        match.annotation_id,
        user,
        action="remove_match",
        mutate=mutate,
        summary=lambda _: f"Removed a match of {_describe(fresh['scu'])}",
        expected_revision=expected_revision,
    )


def move_match(match: PeerMatch, scu: SCU | None, user, *, expected_revision=None) -> Outcome:
    fresh = {}

    def mutate(annotation):
        m, target = reread(match), (reread(scu) if scu is not None else None)
        if target is not None and target.pyramid_id != annotation.pyramid_id:
            raise ValidationError({"scu": f"SCU {target.uid} belongs to another pyramid than the annotation's."})
        fresh["old"] = m.scu
        if m.scu_id != (target.pk if target else None):  # moving to where it is changes nothing (no new revision)
            m.scu = target
            m.save(update_fields=["scu"])
        return m

    return annotation_action(
        match.annotation_id,
        user,
        action="move_match",
        mutate=mutate,
        summary=lambda _: f"Moved a match from {_describe(fresh['old'])} to {_describe(scu)}",
        expected_revision=expected_revision,
    )

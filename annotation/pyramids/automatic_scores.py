"""Automatic pyramid scores: every ranked suggestion from the pyramid alone accepted, scored as an
expert's matches are (``scoring.scores``: no new formula).

Beyond every anchor, not beside it: such a score is automatic and UNVERIFIED (no person looked at
the matches), so it is kept apart from the expert scores and shown only under that name. It is
blind: the suggestions rest on the pyramid, the peer's text and the topic's word weights, never on
anyone's annotation of that peer or of any other peer (``PeerCase.earlier`` and ``expert`` are
dropped), so planting an annotation cannot move it. Pure: no Django here.
"""

from __future__ import annotations

from collections.abc import Iterable

from annotation.pyramids.suggestion_model import Model, PeerCase, ranked
from scoring.model import PeerAnnotation
from scoring.scores import PeerScore, PreparedPyramid, score_prepared


def accepted(case: PeerCase, model: Model | None) -> list[int]:
    """The SCU of each suggestion the ranking gives for the peer from the pyramid alone (above the
    model's threshold, or the hand-set rules' without a model); an SCU suggested twice counts as a
    match and a repetition, as an expert's two matches of one SCU do."""
    blind = PeerCase(case.text, case.scus, case.weights)
    return [c.scu for c, _ in ranked(blind, model)]


def automatic_score(prepared: PreparedPyramid, scus: Iterable[int]) -> PeerScore:
    """The ordinary scores of a peer whose matches are ``scus`` (pyramid uids), nothing marked
    non-matching: only the modified score (and its jackknife) is meaningful, as it ignores the
    peer's size."""
    return score_prepared(prepared, PeerAnnotation.of(scus))

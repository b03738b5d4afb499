"""Pyramid scores of one summary (Nenkova, Passonneau & McKeown 2007; DUCView; SacreROUGE).

Definitions (``docs/pyramid-method.md``), with w(s) the weight of SCU s:

* D = sum of w(s) over the DISTINCT SCUs the summary expresses (repetitions add nothing);
* X = distinct matched SCUs + repetitions + non-matching units (the summary's size in SCUs);
* MaxWeight(k) = sum of the k largest weights (all of them when k exceeds their number);
* Xa = (sum of all weights) / n, made an integer by the convention;
* original = D / MaxWeight(X); modified = D / MaxWeight(Xa); recall = matched / SCUs;
  precision = matched / (matched + non-matching); comprehensive = harmonic mean of the two first.

A score whose denominator is 0 is ``None`` and ``PeerScore.undefined`` says why: a 0 would read
as "the summary is bad", which is a different claim.

Conventions
-----------
``nist`` (default) reproduces NIST's DUC 2006/2007 tables: weight = number of contributors as they
stand, Xa rounded half UP on the exact mean (``Fraction``; never Python's banker's ``round``).

``sacrerouge`` reproduces SacreROUGE's ``pyramid-score`` metric (metric name
``modified_pyramid_score``). What SacreROUGE does, read in github.com/danieldeutsch/sacrerouge:

* ``sacrerouge/data/pyramid.py`` (``Pyramid._load_scus``): while reading a ``.pyr`` it skips a
  contributor whose parts lie in more than one summary, skips an SCU left with no contributor, and
  skips an SCU whose contributors are not from pairwise distinct summaries (the WHOLE SCU, not
  just the duplicate). ``SCU.get_weight`` = number of distinct summary indices of its contributors.
  ``PyramidAnnotation._load_scus`` drops every peer SCU whose uid is not in the loaded (filtered)
  pyramid, so a peer's match of a dropped SCU disappears: it adds neither weight nor size.
* ``sacrerouge/metrics/pyramid_score.py`` (``PyramidScore.score``): D = sum of the weights of the
  annotation's SCUs that are in the pyramid (each SCU once); average = sum over the summaries of
  the number of SCUs they contribute to, divided by the number of summaries (float division);
  ideal weight = the ``ceil(average)`` largest weights; score = D / ideal (an empty pyramid raises
  ``ZeroDivisionError`` there; here the score is ``None``). Only the modified score exists there;
  the other scores of this module are computed on the same filtered pyramid for convenience.
* Jackknifing, ``sacrerouge/data/jackknifers.py`` (``PyramidJackknifer``) and
  ``sacrerouge/commands/score.py`` (``_score_with_metric``): a PEER is scored against each of the
  n pyramids ``Pyramid.remove_summary(i)`` (the reference's contributors removed, SCUs left empty
  removed, n-1 summaries; annotation SCUs no longer in the pyramid ignored) and
  ``modified_pyramid_score_jk`` is the plain mean; no jackknife when n = 1. A REFERENCE summary
  (``sacrerouge/data/dataset_readers/pyramid_based.py``: annotation = ``pyramid.get_annotation(i)``,
  pyramid = ``pyramid.remove_summary(i)``) is scored ONCE against the pyramid of the other n-1
  references, and that single score is stored only under the ``_jk`` name (it is "comparable to
  the jackknifing metrics", both resting on n-1 references); it is not jackknifed again. We do the
  same in both conventions: for a reference, ``modified_jk == modified``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType

from .model import Convention, PeerAnnotation, Pyramid

SCORE_NAMES = ("original", "modified", "modified_jk", "recall", "precision", "comprehensive")


@dataclass(frozen=True)
class PeerScore:
    """Every count behind the scores, so a page can show how a number was obtained."""

    convention: Convention
    n_references: int  # n of the pyramid actually used (n-1 for a reference summary)
    n_scus: int  # SCUs taking part in scoring (weight >= 1)
    observed_weight: int  # D
    matched_scus: int  # distinct SCUs found
    repetitions: int
    non_matching: int
    size: int  # X = matched + repetitions + non_matching
    max_weight_x: int  # MaxWeight(X)
    average_scus: float | None  # real mean SCU count per reference (Xa before rounding)
    xa: int | None
    max_weight_xa: int | None
    original: float | None
    modified: float | None
    modified_jk: float | None
    recall: float | None
    precision: float | None
    comprehensive: float | None
    undefined: Mapping[str, str] = field(default_factory=dict)
    # uids of matches that take no part (SCU vanished with the left-out reference, or dropped by
    # SacreROUGE's legacy rules); they count nowhere, not even in X.
    dropped_matches: tuple[int, ...] = ()
    # (left-out reference, modified score against the other references) behind modified_jk.
    jackknife: tuple[tuple[str, float | None], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "undefined", MappingProxyType(dict(self.undefined)))

    def as_dict(self) -> dict:
        """JSON-ready dict (convention as its string value, tuples as lists)."""
        d = {name: getattr(self, name) for name in self.__dataclass_fields__}
        d["convention"] = self.convention.value
        d["undefined"] = dict(self.undefined)
        d["dropped_matches"] = list(self.dropped_matches)
        d["jackknife"] = [[ref, value] for ref, value in self.jackknife]
        return d


def round_half_up(x: Fraction) -> int:
    """floor(x + 1/2) on an exact value: 4.5 -> 5, 5.5 -> 6, 4.49 -> 4 (``round`` gives 4, 6)."""
    return math.floor(Fraction(x) + Fraction(1, 2))


def compute_xa(total_weight: int, n: int, convention: Convention = Convention.NIST) -> int:
    """Xa from the sum of the weights and the number of references.

    NIST rounds the exact mean half up; SacreROUGE takes its ceiling (``math.ceil`` on a float
    quotient of two small ints equals the exact ceiling, so ``Fraction`` reproduces it).
    """
    if n <= 0:
        raise ValueError("Xa needs at least one reference")
    avg = Fraction(total_weight, n)
    if Convention(convention) is Convention.SACREROUGE:
        return math.ceil(avg)
    return round_half_up(avg)


def max_weight(weights_desc: list[int], k: int) -> int:
    """Sum of the k largest weights (``weights_desc`` sorted in decreasing order)."""
    return sum(weights_desc[: max(k, 0)])


def _check_uids(pyramid: Pyramid, annotation: PeerAnnotation, known: set[int] | None = None) -> None:
    """``known``: the pyramid's uids, when the caller checks many annotations against it."""
    known = {s.uid for s in pyramid.scus} if known is None else known
    unknown = sorted(u for u in annotation.matches if u not in known)
    if unknown:
        raise ValueError(f"annotation matches SCU uid(s) not in the pyramid: {unknown}")


def _effective(pyramid: Pyramid, convention: Convention) -> Pyramid:
    return pyramid.as_sacrerouge() if convention is Convention.SACREROUGE else pyramid


def _observed(weights: Mapping[int, int], annotation: PeerAnnotation) -> tuple[dict[int, int], int]:
    """The matches of SCUs taking part (uid -> count) and D, the sum of their weights (each SCU once)."""
    kept = {u: c for u, c in annotation.matches.items() if u in weights}
    return kept, sum(weights[u] for u in kept)


@dataclass(frozen=True)
class Weights:
    """What the scores need of one pyramid under one convention: n, and uid -> weight for the SCUs
    taking part (weight >= 1) with the weights largest first."""

    n: int
    by_uid: Mapping[int, int]
    desc: tuple[int, ...]
    # What depends on the pyramid alone, computed once: the real mean SCU count per reference, Xa
    # and MaxWeight(Xa); None when the pyramid has no references.
    average: float | None
    xa: int | None
    max_weight_xa: int | None

    @classmethod
    def of(cls, pyramid: Pyramid, convention: Convention) -> Weights:
        """Weights of ``pyramid`` exactly as given (apply ``_effective`` first for SACREROUGE)."""
        return cls.from_weights(pyramid.weights(convention), pyramid.n, convention)

    @classmethod
    def from_weights(cls, by_uid: dict[int, int], n: int, convention: Convention) -> Weights:
        """From uid -> weight (weights >= 1 only) and the number of references."""
        desc = tuple(sorted(by_uid.values(), reverse=True))
        if n == 0:
            return cls(n, MappingProxyType(by_uid), desc, None, None, None)
        xa = compute_xa(sum(desc), n, convention)
        return cls(n, MappingProxyType(by_uid), desc, float(Fraction(sum(desc), n)), xa, max_weight(desc, xa))


@dataclass(frozen=True)
class PreparedPyramid:
    """A pyramid made ready to score many peers under one convention: its weights and those of its
    n jackknife pyramids are computed once here, not once per peer (``score_peer`` = ``prepare``
    then ``score_prepared``; recomputation after an edit scores every peer of a pyramid this way)."""

    convention: Convention
    uids: frozenset[int]
    base: Weights
    jackknife: tuple[tuple[str, Weights], ...]  # (left-out reference, weights); empty when n < 2


def prepare(pyramid: Pyramid, convention: Convention = Convention.NIST) -> PreparedPyramid:
    convention = Convention(convention)
    base = _effective(pyramid, convention)
    weights = Weights.of(base, convention)
    return PreparedPyramid(
        convention, frozenset(s.uid for s in pyramid.scus), weights, _jackknife_weights(base, weights, convention)
    )


def _jackknife_weights(base: Pyramid, weights: Weights, convention: Convention) -> tuple[tuple[str, Weights], ...]:
    """(left-out reference, weights of ``base.without_reference`` it) for each reference (none when
    n < 2), from the weights of ``base`` (the effective pyramid) instead of building the n pyramids
    (most of the CPU of rescoring a pyramid's peers after an edit, ``bench/request_cpu.py``).

    Removing reference r keeps every contributor that lies in another reference too and drops
    the others (those lying in r alone), and an SCU left without contributors. Under NIST the
    weight is the number of contributors, so it loses one per contributor lying in r alone; under
    SACREROUGE the effective pyramid's contributors each lie in one reference, pairwise distinct,
    its weight is their number, and it loses the one lying in r, if any: in both conventions
    w_r(s) = w(s) - #{contributors of s lying in r alone}, and an SCU whose weight falls to 0 takes
    no part (``tests/scoring``: equal to the weights of the pyramids built)."""
    if base.n < 2:
        return ()
    alone: dict[str, list[int]] = {
        ref: [] for ref in base.references
    }  # reference -> uid once per contributor lying in it alone
    for scu in base.scus:
        if scu.uid in weights.by_uid:
            for contributor in scu.contributors:
                if len(contributor.references) == 1:
                    alone[next(iter(contributor.references))].append(scu.uid)
    out = []
    for ref in base.references:
        by_uid = dict(weights.by_uid)
        for uid in alone[ref]:
            by_uid[uid] -= 1
        out.append((ref, Weights.from_weights({u: w for u, w in by_uid.items() if w > 0}, base.n - 1, convention)))
    return tuple(out)


def _core(w: Weights, annotation: PeerAnnotation, convention: Convention) -> dict:
    """All scores but the jackknife, against the pyramid whose weights are ``w``."""
    weights = w.by_uid
    kept, d = _observed(weights, annotation)
    dropped = tuple(sorted(u for u in annotation.matches if u not in weights))
    matched = len(kept)
    reps = sum(c - 1 for c in kept.values())
    nm = annotation.non_matching
    size = matched + reps + nm
    w_desc = w.desc
    n = w.n
    undefined: dict[str, str] = {}
    empty = "empty pyramid: no SCU with a contributor"

    mw_x = max_weight(w_desc, size)
    if not w_desc:
        original = None
        undefined["original"] = empty
    elif size == 0:
        original = None
        undefined["original"] = "the summary has no content units (X = 0)"
    else:
        original = d / mw_x

    if n == 0:
        average = xa = mw_xa = None
        for key in ("average_scus", "xa", "max_weight_xa"):
            undefined[key] = "the pyramid has no reference summaries"
        modified = None
        undefined["modified"] = "the pyramid has no reference summaries"
    else:
        average, xa, mw_xa = w.average, w.xa, w.max_weight_xa
        if not w_desc:
            modified = None
            undefined["modified"] = empty
        elif mw_xa == 0:
            modified = None
            undefined["modified"] = f"Xa is 0 (average {average:.3f} SCUs per reference)"
        else:
            modified = d / mw_xa

    if w_desc:
        recall = matched / len(w_desc)
    else:
        recall = None
        undefined["recall"] = empty
    if matched + nm:
        precision = matched / (matched + nm)
    else:
        precision = None
        undefined["precision"] = "no matched SCU and no non-matching unit"

    if original is None or modified is None:
        comprehensive = None
        missing = [k for k in ("original", "modified") if k in undefined]
        undefined["comprehensive"] = "needs both scores; " + "; ".join(f"{k}: {undefined[k]}" for k in missing)
    elif original == 0 or modified == 0:
        # Harmonic mean <= min; scipy.stats.hmean also gives 0 when a value is 0.
        comprehensive = 0.0
    else:
        comprehensive = 2 * original * modified / (original + modified)

    return dict(
        convention=convention,
        n_references=n,
        n_scus=len(w_desc),
        observed_weight=d,
        matched_scus=matched,
        repetitions=reps,
        non_matching=nm,
        size=size,
        max_weight_x=mw_x,
        average_scus=average,
        xa=xa,
        max_weight_xa=mw_xa,
        original=original,
        modified=modified,
        recall=recall,
        precision=precision,
        comprehensive=comprehensive,
        undefined=undefined,
        dropped_matches=dropped,
    )


def _jackknife(prepared: PreparedPyramid, annotation: PeerAnnotation):
    """(mean, per-reference scores, reason) of leave-one-reference-out modified scores."""
    if prepared.base.n < 2:
        return None, (), f"jackknife needs at least 2 references (n = {prepared.base.n})"
    scores = []
    reason = None
    for ref, weights in prepared.jackknife:
        part = _core(weights, annotation, prepared.convention)
        scores.append((ref, part["modified"]))
        if part["modified"] is None and reason is None:
            reason = f"undefined without reference {ref!r}: {part['undefined']['modified']}"
    if reason is not None:
        return None, tuple(scores), reason
    return math.fsum(v for _, v in scores) / len(scores), tuple(scores), None


def score_prepared(prepared: PreparedPyramid, annotation: PeerAnnotation) -> PeerScore:
    """Scores of a peer against a prepared pyramid (the same as ``score_peer``)."""
    unknown = sorted(u for u in annotation.matches if u not in prepared.uids)
    if unknown:
        raise ValueError(f"annotation matches SCU uid(s) not in the pyramid: {unknown}")
    core = _core(prepared.base, annotation, prepared.convention)
    jk, per_ref, reason = _jackknife(prepared, annotation)
    if reason is not None:
        core["undefined"]["modified_jk"] = reason
    return PeerScore(modified_jk=jk, jackknife=per_ref, **core)


def score_peer(
    pyramid: Pyramid,
    annotation: PeerAnnotation,
    convention: Convention = Convention.NIST,
) -> PeerScore:
    """Scores of a peer (a summary that is not one of the pyramid's references)."""
    return score_prepared(prepare(pyramid, convention), annotation)


def score_reference(
    pyramid: Pyramid,
    reference_id: str,
    annotation: PeerAnnotation,
    convention: Convention = Convention.NIST,
) -> PeerScore:
    """Scores of reference ``reference_id`` against the pyramid of the OTHER references.

    Its contributors are removed, weights and Xa recomputed over n-1 references; matches of SCUs
    that vanish (only this reference expressed them) are dropped. Under SACREROUGE the legacy
    filter is applied before the removal, as SacreROUGE does. ``modified_jk`` equals ``modified``
    (SacreROUGE's ``_jk`` value for a reference; see the module docstring).
    """
    convention = Convention(convention)
    if reference_id not in pyramid.references:
        raise ValueError(f"{reference_id!r} is not a reference of this pyramid")
    _check_uids(pyramid, annotation)
    reduced = _effective(pyramid, convention).without_reference(reference_id)
    core = _core(Weights.of(reduced, convention), annotation, convention)
    if core["modified"] is None:
        core["undefined"]["modified_jk"] = core["undefined"]["modified"]
    return PeerScore(
        modified_jk=core["modified"],
        jackknife=((reference_id, core["modified"]),),
        **core,
    )


def reference_annotation(
    pyramid: Pyramid,
    reference_id: str,
    convention: Convention = Convention.NIST,
) -> PeerAnnotation:
    """The annotation a reference gets for free from the pyramid: the SCUs it contributes to.

    NIST: uid -> number of its contributors lying in the reference (two contributors from one
    reference = one repetition). SACREROUGE: ``Pyramid.get_annotation(i)`` of SacreROUGE, i.e. the
    SCUs of the filtered pyramid with a contributor from the reference (once each).
    """
    convention = Convention(convention)
    if reference_id not in pyramid.references:
        raise ValueError(f"{reference_id!r} is not a reference of this pyramid")
    matches = {}
    for s in _effective(pyramid, convention).scus:
        k = sum(1 for c in s.contributors if reference_id in c.references)
        if k:
            matches[s.uid] = k
    return PeerAnnotation(matches)


def scu_vector(pyramid: Pyramid, annotation: PeerAnnotation) -> tuple[int, ...]:
    """0/1 per pyramid SCU, ascending uid, for paired tests over SCUs (all SCUs as stored)."""
    return scu_vectors(pyramid, [annotation])[0]


def scu_vectors(pyramid: Pyramid, annotations: Sequence[PeerAnnotation]) -> list[tuple[int, ...]]:
    """``scu_vector`` of each annotation against one pyramid (its uids sorted once: a dashboard
    reads every peer of a topic against the topic's pyramid)."""
    uids = sorted(s.uid for s in pyramid.scus)
    known = set(uids)
    out = []
    for annotation in annotations:
        _check_uids(pyramid, annotation, known)
        out.append(tuple(1 if uid in annotation.matches else 0 for uid in uids))
    return out


def modified_against(
    pyramid: Pyramid, annotations: Sequence[PeerAnnotation], convention: Convention = Convention.NIST
) -> list[float | None]:
    """The modified score of each annotation against ``pyramid`` taken as it is (no jackknife).

    Matches of SCUs the pyramid lacks count nowhere, as in the jackknife: for pyramids built from a
    subset of the references (``scoring.stability``), many annotations at once (the weights and
    MaxWeight(Xa) are computed once). Under SACREROUGE pass a pyramid filtered by
    ``Pyramid.as_sacrerouge`` before references were removed, as SacreROUGE filters first.
    """
    convention = Convention(convention)
    weights = Weights.of(_effective(pyramid, convention), convention)
    denominator = _core(weights, PeerAnnotation(), convention)
    if denominator["modified"] is None:
        return [None] * len(annotations)
    return [_observed(weights.by_uid, a)[1] / denominator["max_weight_xa"] for a in annotations]

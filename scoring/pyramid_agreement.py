"""Pyramid construction agreement: do two people who build pyramids from the same references agree?

``docs/agreement.md`` ("Pyramid construction agreement"): for pairs of contributor spans, do both
annotators put them in the same SCU or not? Score comparisons (the same peers scored with each
pyramid) are the practical test. Both are computed here, for two pyramids (:func:`compare`) or
for every pair of n pyramids (:func:`pairwise`). Definitions, in the order they are computed
(``docs/pyramid-agreement.md`` has them with the figures on real data):

1. **Contributor alignment.** A contributor is the set of characters ``(reference, offset)`` its
   spans cover. Two contributors (one per pyramid) overlap by Dice = 2|a & b| / (|a| + |b|)
   (0 when they share no character; only characters of the same reference can be shared). Pairs
   with Dice >= ``threshold`` (default 0.5: one span may be up to three times the other when one
   contains the other) are eligible; the alignment is the one-to-one matching of eligible pairs
   with the largest total Dice (Hungarian method, ``scipy.optimize.linear_sum_assignment``).
   Contributors left without a partner are listed on each side. Contributors with identical
   spans in two SCUs of one pyramid are indistinguishable here: which one is matched is arbitrary.
2. **Clustering agreement** on the m aligned contributors ("items"); each pyramid clusters the
   items by SCU. Pyramid A is taken as the reference ("gold") side, so precision and recall swap
   when the pyramids do; F1 is symmetric.

   * Pairwise: over the unordered pairs of items from DIFFERENT reference summaries (two items
     from one reference can never share an SCU under the DUCView rule, so they carry no
     information; items are from different references when the references of their contributors
     in both pyramids are disjoint), precision = pairs together in both / pairs together in B,
     recall = pairs together in both / pairs together in A, F1 their harmonic mean (the pair-
     counting measures of clustering comparison, e.g. Manning, Raghavan & Schuetze 2008, 16.3).
   * B-cubed (Bagga & Baldwin 1998; Amigo, Gonzalo, Artiles & Verdejo 2009, "A comparison of
     extrinsic clustering evaluation metrics", Inf. Retrieval 12): for item i with cluster A(i) in
     A and B(i) in B (both containing i), precision_i = |A(i) & B(i)| / |B(i)|, recall_i =
     |A(i) & B(i)| / |A(i)|; precision and recall are their means over the items, F1 the harmonic
     mean of the two means.
   * Krippendorff's alpha, nominal, with the pyramids as coders and the item pairs of the pairwise
     measure as units, each valued "same SCU" / "different SCUs". It is computed by
     :func:`scoring.agreement.alpha_dice` on 0/1 values, where 1 - Dice is the nominal distance.
     Caveats: pairs are not independent units (one misplaced contributor changes m - 1 pairs), and
     "different" dominates, so alpha behaves like a chance-corrected pairwise F1; read it with the
     number of units and with B-cubed.
3. **SCU alignment.** shared(s, t) = the aligned items in SCU s of A and SCU t of B. SCUs are
   matched one-to-one maximizing the total shared items (Hungarian method); pairs sharing nothing
   are not matches. A match is *identical* when every contributor of both SCUs is among the
   shared items (same weight, same contributors up to the alignment).
4. **Weight agreement** of matched SCUs: weight = number of contributors (``docs/pyramid-method.md``);
   share of matches with equal weights, mean absolute difference, Pearson and Spearman
   (:mod:`scoring.correlation`) with n.
5. **Score agreement** (the practical test, :func:`score_agreement`): Pearson r with its 95%
   Fisher-z interval over the peers scored with both pyramids, mean absolute difference, and the
   share of peers whose scores differ by more than :data:`scoring.correlation.NOISE` (0.06).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from .agreement import Alpha, alpha_dice
from .correlation import NOISE, Correlation, mean_abs_difference, pearson, spearman
from .model import SCU as ScoringSCU
from .model import Contributor as ScoringContributor
from .model import Pyramid as ScoringPyramid

DEFAULT_THRESHOLD = 0.5


# --- input --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Span:
    """Characters ``[start, end)`` of one reference summary's text (every pyramid compared must
    index the same text: see ``annotation.pyramids.agreement_inputs`` for files whose
    copies of the references differ in whitespace)."""

    reference: str
    start: int
    end: int

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"span {name} must be an int >= 0, got {v!r}")
        if self.end <= self.start:
            raise ValueError(f"empty span [{self.start}, {self.end}) in reference {self.reference!r}")


@dataclass(frozen=True)
class SpanContributor:
    """A contributor as its spans (one or more parts, possibly discontinuous)."""

    spans: tuple[Span, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "spans", tuple(self.spans))
        if not self.spans:
            raise ValueError("a contributor needs at least one span")

    @property
    def references(self) -> frozenset[str]:
        return frozenset(s.reference for s in self.spans)

    def characters(self) -> frozenset[tuple[str, int]]:
        return frozenset((s.reference, i) for s in self.spans for i in range(s.start, s.end))


@dataclass(frozen=True)
class SpanSCU:
    uid: int
    contributors: tuple[SpanContributor, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "contributors", tuple(self.contributors))


@dataclass(frozen=True)
class SpanPyramid:
    """A pyramid with its contributors' spans; ``name`` identifies it in pairwise results."""

    name: str
    references: tuple[str, ...]
    scus: tuple[SpanSCU, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "references", tuple(self.references))
        object.__setattr__(self, "scus", tuple(self.scus))
        uids = [s.uid for s in self.scus]
        if len(set(uids)) != len(uids):
            raise ValueError(f"pyramid {self.name!r}: duplicate SCU uids")
        unknown = {r for s in self.scus for c in s.contributors for r in c.references} - set(self.references)
        if unknown:
            raise ValueError(f"pyramid {self.name!r}: spans in unknown reference(s) {sorted(unknown)}")

    def scoring_pyramid(self) -> ScoringPyramid:
        """The same pyramid as :mod:`scoring.scores` takes it (spans reduced to their references)."""
        return ScoringPyramid(self.references, tuple(
            ScoringSCU(s.uid, tuple(ScoringContributor(c.references) for c in s.contributors)) for s in self.scus))


ContributorKey = tuple[int, int]   # (SCU uid, index of the contributor in that SCU)


def _contributors(p: SpanPyramid) -> list[tuple[ContributorKey, SpanContributor]]:
    """The contributors in a canonical order (SCU uid, then spans). The matchings break ties
    between equally good alignments by position, so without it the figures would depend on the
    order the SCUs and contributors were read in (a file's order, a database's ids), not only on
    what the pyramids hold."""
    keyed = [((s.uid, i), c) for s in p.scus for i, c in enumerate(s.contributors)]
    return sorted(keyed, key=lambda kc: (kc[0][0], sorted((x.reference, x.start, x.end) for x in kc[1].spans)))


def _assign(weights: list[list[float]]) -> list[tuple[int, int]]:
    """Row/column pairs of a maximum-weight one-to-one matching, pairs of weight 0 left out."""
    if not weights or not weights[0]:
        return []
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(weights, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols) if weights[r][c] > 0]


# --- 1. contributors --------------------------------------------------------------------------

@dataclass(frozen=True)
class AlignedContributor:
    a: ContributorKey
    b: ContributorKey
    dice: float
    references: frozenset[str]   # of both contributors


@dataclass(frozen=True)
class ContributorAlignment:
    threshold: float
    aligned: tuple[AlignedContributor, ...]
    unmatched_a: tuple[ContributorKey, ...]
    unmatched_b: tuple[ContributorKey, ...]

    @property
    def mean_dice(self) -> float | None:
        """How closely the aligned contributors' spans agree (1 = the same characters)."""
        return math.fsum(x.dice for x in self.aligned) / len(self.aligned) if self.aligned else None

    @property
    def exact(self) -> int:
        """Aligned contributors covering exactly the same characters in both pyramids."""
        return sum(x.dice == 1 for x in self.aligned)


def align_contributors(a: SpanPyramid, b: SpanPyramid, threshold: float = DEFAULT_THRESHOLD) -> ContributorAlignment:
    """One-to-one matching of the contributors by character-overlap Dice (module docstring, 1)."""
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    ca, cb = _contributors(a), _contributors(b)
    chars_a = [c.characters() for _, c in ca]
    chars_b = [c.characters() for _, c in cb]
    owners: dict[tuple[str, int], list[int]] = {}
    for j, chars in enumerate(chars_b):
        for ch in chars:
            owners.setdefault(ch, []).append(j)
    weights = [[0.0] * len(cb) for _ in ca]
    for i, chars in enumerate(chars_a):
        for j, common in Counter(j for ch in chars for j in owners.get(ch, ())).items():
            dice = 2 * common / (len(chars) + len(chars_b[j]))
            if dice >= threshold:
                weights[i][j] = dice
    matched = _assign(weights)
    aligned = tuple(AlignedContributor(ca[i][0], cb[j][0], weights[i][j], ca[i][1].references | cb[j][1].references)
                    for i, j in sorted(matched))
    ia, ib = {i for i, _ in matched}, {j for _, j in matched}
    return ContributorAlignment(threshold, aligned,
                                tuple(k for i, (k, _) in enumerate(ca) if i not in ia),
                                tuple(k for j, (k, _) in enumerate(cb) if j not in ib))


# --- 2. clustering ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClusteringAgreement:
    """Agreement of the two SCU clusterings of the aligned contributors (module docstring, 2)."""

    items: int                 # aligned contributors
    pairs: int                 # item pairs from different references (units of the pairwise figures)
    together_a: int            # pairs in one SCU in A
    together_b: int
    together_both: int
    pairwise_precision: float | None
    pairwise_recall: float | None
    pairwise_f1: float | None
    bcubed_precision: float | None
    bcubed_recall: float | None
    bcubed_f1: float | None
    alpha: Alpha
    reason: str | None = None  # why a pairwise figure is None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _harmonic(p: float | None, r: float | None) -> float | None:
    if p is None or r is None:
        return None
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def clustering_agreement(alignment: ContributorAlignment) -> ClusteringAgreement:
    items = alignment.aligned
    pairs = together_a = together_b = together_both = 0
    units_a: dict[int, int] = {}
    units_b: dict[int, int] = {}
    for k, (x, y) in enumerate(combinations(items, 2)):
        if x.references & y.references:
            continue
        same_a, same_b = x.a[0] == y.a[0], x.b[0] == y.b[0]
        pairs += 1
        together_a += same_a
        together_b += same_b
        together_both += same_a and same_b
        units_a[k], units_b[k] = int(same_a), int(same_b)
    precision, recall = _ratio(together_both, together_b), _ratio(together_both, together_a)
    reasons = [why for why, den in (("no pair shares an SCU in B", together_b), ("no pair shares an SCU in A", together_a)) if not den]
    if not items:
        reasons = ["no aligned contributors"]
    # B-cubed from the contingency table: item i in cell (s, t) has |A(i) & B(i)| = n_st.
    cells = Counter((x.a[0], x.b[0]) for x in items)
    size_a = Counter(x.a[0] for x in items)
    size_b = Counter(x.b[0] for x in items)
    m = len(items)
    b_precision = math.fsum(n * n / size_b[t] for (s, t), n in cells.items()) / m if m else None
    b_recall = math.fsum(n * n / size_a[s] for (s, t), n in cells.items()) / m if m else None
    return ClusteringAgreement(
        m, pairs, together_a, together_b, together_both,
        precision, recall, _harmonic(precision, recall),
        b_precision, b_recall, _harmonic(b_precision, b_recall),
        alpha_dice({"a": units_a, "b": units_b}),
        "; ".join(reasons) or None,
    )


# --- 3. SCUs ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MatchedSCU:
    a: int                 # uid in A
    b: int                 # uid in B
    shared: int            # aligned contributors in both
    weight_a: int
    weight_b: int

    @property
    def identical(self) -> bool:
        return self.shared == self.weight_a == self.weight_b


@dataclass(frozen=True)
class SCUAlignment:
    matched: tuple[MatchedSCU, ...]
    unmatched_a: tuple[int, ...]
    unmatched_b: tuple[int, ...]

    @property
    def identical(self) -> int:
        return sum(m.identical for m in self.matched)


def align_scus(a: SpanPyramid, b: SpanPyramid, alignment: ContributorAlignment) -> SCUAlignment:
    """One-to-one SCU matching maximizing the shared aligned contributors (module docstring, 3)."""
    ua, ub = sorted(s.uid for s in a.scus), sorted(s.uid for s in b.scus)   # canonical order, as ``_contributors``
    row, col = {u: i for i, u in enumerate(ua)}, {u: j for j, u in enumerate(ub)}
    shared = [[0] * len(ub) for _ in ua]
    for x in alignment.aligned:
        shared[row[x.a[0]]][col[x.b[0]]] += 1
    matched = _assign(shared)
    wa = {s.uid: len(s.contributors) for s in a.scus}
    wb = {s.uid: len(s.contributors) for s in b.scus}
    pairs = tuple(sorted((MatchedSCU(ua[i], ub[j], shared[i][j], wa[ua[i]], wb[ub[j]]) for i, j in matched),
                         key=lambda m: (m.a, m.b)))
    ma, mb = {m.a for m in pairs}, {m.b for m in pairs}
    return SCUAlignment(pairs, tuple(u for u in ua if u not in ma), tuple(u for u in ub if u not in mb))


# --- 4. weights -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WeightAgreement:
    n: int                       # matched SCUs
    exact_share: float | None    # share with equal weights
    mean_abs_difference: float | None
    pearson: Correlation
    spearman: Correlation


def weight_agreement(scus: SCUAlignment) -> WeightAgreement:
    wa = [m.weight_a for m in scus.matched]
    wb = [m.weight_b for m in scus.matched]
    n = len(wa)
    return WeightAgreement(n, _ratio(sum(x == y for x, y in zip(wa, wb)), n), mean_abs_difference(wa, wb),
                           pearson(wa, wb), spearman(wa, wb))


# --- 5. scores ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ScoreAgreement:
    """The same peers scored with two pyramids (module docstring, 5)."""

    n: int                              # peers with a score under both pyramids
    pearson: Correlation
    mean_abs_difference: float | None
    above_noise: int                    # peers with |difference| > noise
    share_above_noise: float | None
    noise: float
    missing: tuple[Hashable, ...] = ()  # peers left out: no score (or an undefined one) on one side


def score_agreement(scores_a: Mapping[Hashable, float | None], scores_b: Mapping[Hashable, float | None],
                    noise: float = NOISE) -> ScoreAgreement:
    """Per-peer scores against pyramid A and against pyramid B (peer -> score, None = undefined)."""
    both = [p for p in scores_a if p in scores_b and scores_a[p] is not None and scores_b[p] is not None]
    missing = tuple(sorted((set(scores_a) | set(scores_b)) - set(both), key=str))
    xs, ys = [scores_a[p] for p in both], [scores_b[p] for p in both]
    above = sum(abs(x - y) > noise for x, y in zip(xs, ys))
    return ScoreAgreement(len(both), pearson(xs, ys), mean_abs_difference(xs, ys), above,
                          _ratio(above, len(both)), noise, missing)


# --- pyramids -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairAgreement:
    a: str
    b: str
    scus_a: int
    scus_b: int
    contributors_a: int
    contributors_b: int
    contributors: ContributorAlignment
    clustering: ClusteringAgreement
    scus: SCUAlignment
    weights: WeightAgreement


def compare(a: SpanPyramid, b: SpanPyramid, threshold: float = DEFAULT_THRESHOLD) -> PairAgreement:
    """Every construction-agreement figure of pyramid B against pyramid A (A is the "gold" side)."""
    if set(a.references) != set(b.references):
        raise ValueError(f"pyramids {a.name!r} and {b.name!r} are not built from the same references: "
                         f"{sorted(a.references)} vs {sorted(b.references)}")
    contributors = align_contributors(a, b, threshold)
    scus = align_scus(a, b, contributors)
    return PairAgreement(a.name, b.name, len(a.scus), len(b.scus),
                         sum(len(s.contributors) for s in a.scus), sum(len(s.contributors) for s in b.scus),
                         contributors, clustering_agreement(contributors), scus, weight_agreement(scus))


def pairwise(pyramids: Sequence[SpanPyramid], threshold: float = DEFAULT_THRESHOLD) -> dict[tuple[str, str], PairAgreement]:
    """(name_i, name_j) -> :func:`compare` of pyramid j against pyramid i, for every i < j."""
    names = [p.name for p in pyramids]
    if len(set(names)) != len(names):
        raise ValueError(f"pyramid names must be unique: {names}")
    return {(x.name, y.name): compare(x, y, threshold) for x, y in combinations(pyramids, 2)}

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
   with the largest total Dice (Hungarian method, exact: :mod:`scoring.matching`). Contributors
   left without a partner are listed on each side.
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
   (:mod:`scoring.correlation`) with n. The same per aligned contributor (the weights of its SCU
   in A and in B), which needs no SCU matching.
5. **Score agreement** (the practical test, :func:`score_agreement`): Pearson r with its 95%
   Fisher-z interval over the peers scored with both pyramids, mean absolute difference, and the
   share of peers whose scores differ by more than :data:`scoring.correlation.NOISE` (0.06,
   :func:`scoring.correlation.above_noise`).

**Ties.** Every figure is a function of the pyramids' content (spans, labels) and of which side is
A, never of SCU uids, of the order a file or a database lists SCUs and contributors in. Pyramids
hold many equally good matchings (the same characters are a contributor of two SCUs; an SCU shares
one contributor with each of two SCUs), so both matchings maximize several criteria in turn,
exactly (:mod:`scoring.matching`): the contributor alignment the total Dice, then the agreement of
the matched contributors' SCUs (eligible contributor pairs between the two SCUs), then the words
their labels share; the SCU alignment the shared items, then the eligible contributor pairs
between the two SCUs, then the label words. What ties remain go to the first pair in content
order: SCUs ordered by their contributors' spans (reference, start, end) then label, contributors
within an SCU by their spans. Two SCUs alike in spans and label are interchangeable, and so are two
contributors with the same spans in one SCU: either choice gives the same figures.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from .agreement import Alpha, alpha_dice
from .correlation import NOISE, Correlation, above_noise, mean_abs_difference, pearson, spearman
from .matching import combine, max_weight_matching
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
    """An SCU: its uid names it in results; its label only breaks ties between equal alignments."""

    uid: int
    contributors: tuple[SpanContributor, ...]
    label: str = ""

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
        return ScoringPyramid(
            self.references,
            tuple(
                ScoringSCU(s.uid, tuple(ScoringContributor(c.references) for c in s.contributors)) for s in self.scus
            ),
        )


ContributorKey = tuple[int, int]  # (SCU uid, index of the contributor in that SCU)
ALGORITHM = 2  # stored with computed figures: figures of another algorithm are stale (version 1 broke ties by uid)
_DICE_UNIT = 10**12  # Dice compared exactly, in these units (equal ratios stay equal, others stay apart)


def _span_key(c: SpanContributor) -> tuple[tuple[str, int, int], ...]:
    return tuple(sorted((s.reference, s.start, s.end) for s in c.spans))


def _words(label: str) -> Counter:
    return Counter(label.lower().split())


def _canonical_scus(p: SpanPyramid) -> list[SpanSCU]:
    """The SCUs in an order given by their content alone: their contributors' spans, then label.
    Two SCUs equal in both are interchangeable: whichever comes first, the figures are the same."""
    return sorted(p.scus, key=lambda s: (sorted(_span_key(c) for c in s.contributors), " ".join(s.label.split())))


def _contributors(p: SpanPyramid) -> list[tuple[ContributorKey, SpanContributor]]:
    """The contributors in an order given by content alone (SCUs as ``_canonical_scus``, then spans):
    the last tie-break of the matchings is this order, so it must not be a file's or a database's."""
    return [
        ((s.uid, i), c)
        for s in _canonical_scus(p)
        for i, c in sorted(enumerate(s.contributors), key=lambda ic: _span_key(ic[1]))
    ]


def _label_overlap(x: str, y: str) -> int:
    """Words two SCU labels share (with repetitions, case ignored): the labels tie-break."""
    return sum((_words(x) & _words(y)).values())


# --- 1. contributors --------------------------------------------------------------------------


@dataclass(frozen=True)
class AlignedContributor:
    a: ContributorKey
    b: ContributorKey
    dice: float
    references: frozenset[str]  # of both contributors


@dataclass(frozen=True)
class ContributorAlignment:
    threshold: float
    aligned: tuple[AlignedContributor, ...]
    unmatched_a: tuple[ContributorKey, ...]
    unmatched_b: tuple[ContributorKey, ...]
    # (uid in A, uid in B) -> eligible contributor pairs between the two SCUs (the SCU alignment's tie-break)
    affinity: Mapping[tuple[int, int], int] = field(default_factory=dict, compare=False, repr=False)

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
    eligible: dict[tuple[int, int], tuple[float, int]] = {}  # (i, j) -> (Dice, Dice in exact units)
    for i, chars in enumerate(chars_a):
        for j, common in Counter(j for ch in chars for j in owners.get(ch, ())).items():
            size = len(chars) + len(chars_b[j])
            if 2 * common / size >= threshold:
                eligible[(i, j)] = 2 * common / size, 2 * common * _DICE_UNIT // size
    affinity = Counter((ca[i][0][0], cb[j][0][0]) for i, j in eligible)
    labels_a, labels_b = {s.uid: s.label for s in a.scus}, {s.uid: s.label for s in b.scus}
    # Ties in total Dice go to the pairs whose SCUs have the most eligible pairs between them, then
    # the most label words in common, then to the first in content order (``_contributors``).
    criteria = {
        (i, j): (
            units,
            affinity[ca[i][0][0], cb[j][0][0]] - 1,
            _label_overlap(labels_a[ca[i][0][0]], labels_b[cb[j][0][0]]),
        )
        for (i, j), (_, units) in eligible.items()
    }
    matched = max_weight_matching(combine(criteria, min(len(ca), len(cb))))
    aligned = tuple(
        sorted(
            (
                AlignedContributor(ca[i][0], cb[j][0], eligible[i, j][0], ca[i][1].references | cb[j][1].references)
                for i, j in matched
            ),
            key=lambda x: (x.a, x.b),
        )
    )
    ia, ib = {i for i, _ in matched}, {j for _, j in matched}
    return ContributorAlignment(
        threshold,
        aligned,
        tuple(sorted(k for i, (k, _) in enumerate(ca) if i not in ia)),
        tuple(sorted(k for j, (k, _) in enumerate(cb) if j not in ib)),
        dict(affinity),
    )


# --- 2. clustering ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusteringAgreement:
    """Agreement of the two SCU clusterings of the aligned contributors (module docstring, 2)."""

    items: int  # aligned contributors
    pairs: int  # item pairs from different references (units of the pairwise figures)
    together_a: int  # pairs in one SCU in A
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
    reasons = [
        why
        for why, den in (("no pair shares an SCU in B", together_b), ("no pair shares an SCU in A", together_a))
        if not den
    ]
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
        m,
        pairs,
        together_a,
        together_b,
        together_both,
        precision,
        recall,
        _harmonic(precision, recall),
        b_precision,
        b_recall,
        _harmonic(b_precision, b_recall),
        alpha_dice({"a": units_a, "b": units_b}),
        "; ".join(reasons) or None,
    )


def with_unmatched_as_singletons(
    a: SpanPyramid, b: SpanPyramid, alignment: ContributorAlignment
) -> ContributorAlignment:
    """The alignment with every unmatched contributor added as an item alone in an SCU of its own on
    the other side (negative uids there), so that :func:`clustering_agreement` counts content one
    pyramid has and the other lacks against both (a draft's missed or extra contributors), where the
    plain figures leave it out."""
    refs_a, refs_b = ({(s.uid, i): c.references for s in p.scus for i, c in enumerate(s.contributors)} for p in (a, b))
    extra = [AlignedContributor(key, (-n, 0), 0.0, refs_a[key]) for n, key in enumerate(alignment.unmatched_a, 1)]
    offset = len(extra)
    extra += [
        AlignedContributor((-offset - n, 0), key, 0.0, refs_b[key]) for n, key in enumerate(alignment.unmatched_b, 1)
    ]
    return ContributorAlignment(alignment.threshold, alignment.aligned + tuple(extra), (), (), alignment.affinity)


# --- 3. SCUs ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchedSCU:
    a: int  # uid in A
    b: int  # uid in B
    shared: int  # aligned contributors in both
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
    sa, sb = _canonical_scus(a), _canonical_scus(b)
    row, col = {s.uid: i for i, s in enumerate(sa)}, {s.uid: j for j, s in enumerate(sb)}
    shared = Counter((row[x.a[0]], col[x.b[0]]) for x in alignment.aligned)
    # Ties in shared contributors go to the SCUs with the most eligible contributor pairs between
    # them (aligned or not), then with the most label words in common, then to the first in content order.
    criteria = {
        (i, j): (n, alignment.affinity.get((sa[i].uid, sb[j].uid), 0), _label_overlap(sa[i].label, sb[j].label))
        for (i, j), n in shared.items()
    }
    matched = max_weight_matching(combine(criteria, min(len(sa), len(sb))))
    pairs = tuple(
        sorted(
            (
                MatchedSCU(sa[i].uid, sb[j].uid, shared[i, j], len(sa[i].contributors), len(sb[j].contributors))
                for i, j in matched
            ),
            key=lambda m: (m.a, m.b),
        )
    )
    ma, mb = {m.a for m in pairs}, {m.b for m in pairs}
    return SCUAlignment(
        pairs, tuple(sorted(s.uid for s in sa if s.uid not in ma)), tuple(sorted(s.uid for s in sb if s.uid not in mb))
    )


# --- 4. weights -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WeightAgreement:
    n: int  # matched SCUs (per SCU) or aligned contributors (per contributor)
    exact_share: float | None  # share with equal weights
    mean_abs_difference: float | None
    pearson: Correlation
    spearman: Correlation


def weight_agreement(scus: SCUAlignment) -> WeightAgreement:
    """The weights of the matched SCUs."""
    return _weights([m.weight_a for m in scus.matched], [m.weight_b for m in scus.matched])


def contributor_weight_agreement(a: SpanPyramid, b: SpanPyramid, alignment: ContributorAlignment) -> WeightAgreement:
    """For every aligned contributor, the weight of its SCU in A against that in B: weights compared
    without an SCU matching, so no choice between equally good SCU matchings can enter."""
    wa, wb = ({s.uid: len(s.contributors) for s in p.scus} for p in (a, b))
    return _weights([wa[x.a[0]] for x in alignment.aligned], [wb[x.b[0]] for x in alignment.aligned])


def _weights(wa: list[int], wb: list[int]) -> WeightAgreement:
    n = len(wa)
    return WeightAgreement(
        n,
        _ratio(sum(x == y for x, y in zip(wa, wb, strict=True)), n),
        mean_abs_difference(wa, wb),
        pearson(wa, wb),
        spearman(wa, wb),
    )


# --- 5. scores ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreAgreement:
    """The same peers scored with two pyramids (module docstring, 5)."""

    n: int  # peers with a score under both pyramids
    pearson: Correlation
    mean_abs_difference: float | None
    above_noise: int  # peers with |difference| > noise
    share_above_noise: float | None
    noise: float
    missing: tuple[Hashable, ...] = ()  # peers left out: no score (or an undefined one) on one side


def score_agreement(
    scores_a: Mapping[Hashable, float | None], scores_b: Mapping[Hashable, float | None], noise: float = NOISE
) -> ScoreAgreement:
    """Per-peer scores against pyramid A and against pyramid B (peer -> score, None = undefined)."""
    both = [p for p in scores_a if p in scores_b and scores_a[p] is not None and scores_b[p] is not None]
    missing = tuple(sorted((set(scores_a) | set(scores_b)) - set(both), key=str))
    xs, ys = [scores_a[p] for p in both], [scores_b[p] for p in both]
    above = sum(above_noise(x - y, noise) for x, y in zip(xs, ys, strict=True))
    return ScoreAgreement(
        len(both), pearson(xs, ys), mean_abs_difference(xs, ys), above, _ratio(above, len(both)), noise, missing
    )


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
    contributor_weights: WeightAgreement


def compare(a: SpanPyramid, b: SpanPyramid, threshold: float = DEFAULT_THRESHOLD) -> PairAgreement:
    """Every construction-agreement figure of pyramid B against pyramid A (A is the "gold" side)."""
    if set(a.references) != set(b.references):
        raise ValueError(
            f"pyramids {a.name!r} and {b.name!r} are not built from the same references: "
            f"{sorted(a.references)} vs {sorted(b.references)}"
        )
    contributors = align_contributors(a, b, threshold)
    scus = align_scus(a, b, contributors)
    return PairAgreement(
        a.name,
        b.name,
        len(a.scus),
        len(b.scus),
        sum(len(s.contributors) for s in a.scus),
        sum(len(s.contributors) for s in b.scus),
        contributors,
        clustering_agreement(contributors),
        scus,
        weight_agreement(scus),
        contributor_weight_agreement(a, b, contributors),
    )


def pairwise(
    pyramids: Sequence[SpanPyramid], threshold: float = DEFAULT_THRESHOLD
) -> dict[tuple[str, str], PairAgreement]:
    """(name_i, name_j) -> :func:`compare` of pyramid j against pyramid i, for every i < j."""
    names = [p.name for p in pyramids]
    if len(set(names)) != len(names):
        raise ValueError(f"pyramid names must be unique: {names}")
    return {(x.name, y.name): compare(x, y, threshold) for x, y in combinations(pyramids, 2)}

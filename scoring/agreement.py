"""Inter-annotator agreement on peer annotation: Krippendorff's alpha with the 1 - Dice distance.

Passonneau et al. (2005) and Nenkova, Passonneau & McKeown (2007, section 4.1): units are a
pyramid's SCUs, coders are annotators, the value of (annotator, SCU) is how many times the
annotator found the SCU in the peer (0, 1, 2, ...). Dice rewards partial agreement on repetitions
(2 vs 3 -> Dice 0.8, distance 0.2), unlike a nominal distance.

Computed via the coincidence matrix, in exact ``Fraction`` arithmetic (so perfect agreement gives
exactly 1): for a unit with m >= 2 values, every ordered pair of values from different coders adds
1/(m-1) to o[c][k]; n_c = sum_k o[c][k]; n = sum_c n_c;
alpha = 1 - (n - 1) * sum o[c][k] d(c,k) / sum n_c n_k d(c,k).
Units with fewer than 2 values are not pairable and are ignored. When every pairable value is
identical the expected disagreement is 0 and alpha is undefined: ``value`` is None with a reason
(NLTK returns 1 there and ``krippendorff`` raises; neither is shown to a user as such).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

NOT_COMPUTABLE_IDENTICAL = "not computable: every value is identical (expected disagreement is 0)"
TOO_FEW_VALUES = "fewer than 2 pairable values"


def _dice_distance_exact(a: int, b: int) -> Fraction:
    if a == 0 and b == 0:
        return Fraction(0)
    return 1 - Fraction(2 * min(a, b), a + b)


def dice_distance(a: int, b: int) -> float:
    """1 - 2 min(a, b) / (a + b); 0 for (0, 0). Found vs not found -> 1; 2 vs 3 -> 0.2."""
    _check_value(a)
    _check_value(b)
    return float(_dice_distance_exact(a, b))


def _check_value(v) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"agreement values must be ints >= 0 (or None if missing), got {v!r}")


@dataclass(frozen=True)
class Alpha:
    """alpha_Dice and what it rests on; ``value`` None iff ``reason`` says why."""

    value: float | None
    reason: str | None
    units: int  # pairable units (>= 2 values) actually used
    values: int  # pairable values (n of the coincidence matrix)
    coders: int  # coders with at least one pairable value
    observed_disagreement: float | None = None
    expected_disagreement: float | None = None

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def alpha_dice(matrix: Mapping[Hashable, Mapping[Hashable, int | None]]) -> Alpha:
    """Krippendorff's alpha with the 1 - Dice distance.

    ``matrix[coder][unit]`` = count; a missing key or None is a missing value. Any number of coders.
    """
    by_unit: dict[Hashable, list[tuple[Hashable, int]]] = {}
    for coder, row in matrix.items():
        for unit, v in row.items():
            if v is None:
                continue
            _check_value(v)
            by_unit.setdefault(unit, []).append((coder, v))

    # Units with the same multiset of values contribute identically: group them (pooled matrices
    # have thousands of units but few distinct patterns).
    patterns: Counter = Counter()
    units = 0
    coders: set = set()
    for entries in by_unit.values():
        if len(entries) < 2:
            continue
        units += 1
        coders.update(c for c, _ in entries)
        patterns[tuple(sorted(v for _, v in entries))] += 1

    coincidence: Counter = Counter()
    for pattern, times in patterns.items():
        share = Fraction(times, len(pattern) - 1)
        counts = Counter(pattern)
        # Ordered pairs of values from different coders: n_a * n_b pairs for a != b,
        # n_a * (n_a - 1) for a == b.
        for a, na in counts.items():
            for b, nb in counts.items():
                pairs = na * (nb - 1) if a == b else na * nb
                if pairs:
                    coincidence[a, b] += pairs * share

    marginals: Counter = Counter()
    for (a, _b), o in coincidence.items():
        marginals[a] += o
    n = sum(marginals.values())
    if n < 2:
        return Alpha(None, TOO_FEW_VALUES, units, int(n), len(coders))

    observed = sum(o * _dice_distance_exact(a, b) for (a, b), o in coincidence.items()) / n
    expected = sum(
        na * nb * _dice_distance_exact(a, b) for a, na in marginals.items() for b, nb in marginals.items()
    ) / (n * (n - 1))
    if expected == 0:
        return Alpha(None, NOT_COMPUTABLE_IDENTICAL, units, int(n), len(coders), float(observed), 0.0)
    value = 1 - observed / expected
    return Alpha(float(value), None, units, int(n), len(coders), float(observed), float(expected))


def peer_matrix(
    scu_uids: Iterable[int],
    annotations: Mapping[Hashable, Mapping[int, int]],
) -> dict[Hashable, dict[int, int]]:
    """Reliability matrix of one peer: every pyramid SCU is a unit, 0 where a coder did not find it.

    ``annotations[coder]`` = uid -> times found (a ``PeerAnnotation.matches``). A coder absent from
    ``annotations`` did not annotate this peer (missing values, not zeros).
    """
    uids = list(dict.fromkeys(scu_uids))
    known = set(uids)
    out = {}
    for coder, found in annotations.items():
        unknown = sorted(u for u in found if u not in known)
        if unknown:
            raise ValueError(f"coder {coder!r} found SCU uid(s) not in the pyramid: {unknown}")
        out[coder] = {u: found.get(u, 0) for u in uids}
    return out


@dataclass(frozen=True)
class AgreementSummary:
    """Per-peer values, their mean (the paper's Table III figure) and the pooled value."""

    by_peer: Mapping[Hashable, Alpha]
    mean: float | None
    peers_in_mean: int
    not_computable: tuple[Hashable, ...]
    pooled: Alpha
    mean_reason: str | None = None
    units_in_mean: int = 0  # pairable units behind the mean (sum over the peers in it)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_peer", MappingProxyType(dict(self.by_peer)))

    def as_dict(self) -> dict:
        return {
            "by_peer": {str(p): a.as_dict() for p, a in self.by_peer.items()},
            "mean": self.mean,
            "peers_in_mean": self.peers_in_mean,
            "units_in_mean": self.units_in_mean,
            "not_computable": [str(p) for p in self.not_computable],
            "mean_reason": self.mean_reason,
            "pooled": self.pooled.as_dict(),
        }


def alpha_dice_summary(
    per_peer: Mapping[Hashable, Mapping[Hashable, Mapping[Hashable, int | None]]],
) -> AgreementSummary:
    """alpha_Dice per peer, the mean of the computable ones, and the pooled value.

    Pooled: one matrix whose units are (peer, unit) pairs, so every peer's SCUs count as units.
    """
    by_peer = {peer: alpha_dice(m) for peer, m in per_peer.items()}
    ok = {p: a for p, a in by_peer.items() if a.value is not None}
    bad = tuple(p for p, a in by_peer.items() if a.value is None)
    if ok:
        mean = sum(a.value for a in ok.values()) / len(ok)
        mean_reason = None
    else:
        mean = None
        mean_reason = "no peer has a computable alpha" if by_peer else "no peers"
    pooled_matrix: dict[Hashable, dict[Hashable, int | None]] = {}
    for peer, m in per_peer.items():
        for coder, row in m.items():
            target = pooled_matrix.setdefault(coder, {})
            for unit, v in row.items():
                target[(peer, unit)] = v
    return AgreementSummary(
        by_peer=by_peer,
        mean=mean,
        peers_in_mean=len(ok),
        not_computable=bad,
        pooled=alpha_dice(pooled_matrix),
        mean_reason=mean_reason,
        units_in_mean=sum(a.units for a in ok.values()),
    )

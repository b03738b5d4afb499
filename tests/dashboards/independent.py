"""Independent computations of the statistics the pages show, for the real-data tests: NIST's own
score tables read directly, and each statistic written out from its definition with numpy, by
another route than ``scoring/`` takes wherever one exists (all 2^n sign patterns counted by meet
in the middle rather than sampled; the t-test's power by integrating over the chi-square rather
than scipy's noncentral t). Where a figure rests on seeded draws (bootstrap intervals, topic
stability), the draws are redone here from the documented recipe, so equal seeds give equal numbers.
"""

import itertools
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats


def nist_modified(table: Path) -> dict[str, dict[str, float]]:
    """peer system -> topic -> NIST's modified score (the mean of the annotators' rows where a topic
    was annotated twice), from a DUC ``*_modified_scores.txt`` (topic, peer, modified, ...)."""
    rows = defaultdict(list)
    for line in table.read_text().splitlines():
        cells = line.split("\t")
        if len(cells) >= 3 and cells[0].strip():
            rows[(cells[0], str(int(cells[1])))].append(float(cells[2]))
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (topic, peer), values in rows.items():
        out[peer][topic] = float(np.mean(values))
    return dict(out)


def percentile_bootstrap(values, *, seed: int, resamples: int, confidence: float) -> tuple[float, float]:
    """The percentile interval of the mean: ``resamples`` resamples of the topics (positions drawn as
    ``default_rng(seed).integers(0, n, (resamples, n))``), the quantiles of their means (linear)."""
    values = np.asarray(values, dtype=float)
    positions = np.random.default_rng(seed).integers(0, len(values), (resamples, len(values)))
    alpha = (1 - confidence) / 2
    low, high = np.quantile(values[positions].mean(axis=1), [alpha, 1 - alpha])
    return float(low), float(high)


def exact_sign_flip_p(differences) -> float:
    """Two-sided p-value of sum(differences) over all 2^n sign patterns, each counted: the patterns
    of the two halves are enumerated apart and paired by sorting (meet in the middle)."""
    d = np.asarray(differences, dtype=float)
    threshold = abs(d.sum()) - 1e-9

    def sums(part):
        return np.array([np.dot(signs, part) for signs in itertools.product((-1.0, 1.0), repeat=len(part))])

    half = len(d) // 2
    left, right = sums(d[:half]), np.sort(sums(d[half:]))
    at_least = len(right) - np.searchsorted(right, threshold - left, side="left")  # left + right >= threshold
    at_most = np.searchsorted(right, -threshold - left, side="right")  # left + right <= -threshold
    return float((at_least + at_most).sum() / 2 ** len(d))


def holm(p_values: list[float]) -> list[float]:
    """Holm's adjusted p-values, in the given order."""
    order = np.argsort(p_values, kind="stable")
    m = len(p_values)
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def pair_tests(per_system: dict[str, dict[str, float]]) -> dict[frozenset, tuple[float, float, float]]:
    """{a, b} -> (mean difference a - b with a < b by name, exact p, Holm-adjusted p) for every pair."""
    names = sorted(per_system)
    pairs = list(itertools.combinations(names, 2))
    diffs = [
        np.array([per_system[a][t] - per_system[b][t] for t in sorted(per_system[a].keys() & per_system[b].keys())])
        for a, b in pairs
    ]
    p = [exact_sign_flip_p(d) for d in diffs]
    return {
        frozenset(pair): (float(d.mean()), pv, ph) for pair, d, pv, ph in zip(pairs, diffs, p, holm(p), strict=True)
    }


def check_matrix_cell(a: str, b: str, verdict: str, title: str, tests: dict) -> None:
    """One cell of the Significance page's matrix (row a, column b: its class and its tooltip, e.g.
    "difference 0.0633 over 20 topics; p = 0.0002, Holm-adjusted p = 0.0427") against ``pair_tests``."""
    difference, p, p_holm = tests[frozenset((a, b))]
    sign = 1 if a < b else -1
    expected = "same" if p_holm >= 0.05 else "better" if sign * difference > 0 else "worse"
    assert verdict == expected, (a, b, title)
    assert float(re.search(r"difference (-?[\d.]+)", title).group(1)) == pytest.approx(sign * difference, abs=1e-4)
    shown = re.search(r"; p ([=<]) ([\d.]+), Holm-adjusted p ([=<]) ([\d.]+)", title)
    # NIST's table rounds the scores to 4 decimals, which moves a few of the 2^n patterns across
    # the observed sum: the tolerances.
    for relation, number, value, tolerance in (
        (shown[1], shown[2], p, {"abs": 1e-3}),
        (shown[3], shown[4], p_holm, {"rel": 0.02, "abs": 1e-3}),
    ):
        if relation == "<":
            assert value < float(number) + tolerance["abs"], (a, b, title)
        else:
            assert float(number) == pytest.approx(value, **tolerance), (a, b, title)


def topic_stability(per_system: dict[str, dict[str, float]], *, seed: int, draws: int) -> dict[int, float]:
    """k -> mean Kendall tau-b (scipy) between the ranking over k random topics and the full ranking,
    k = 1 .. topics - 1; per k, the topics of each draw are the first k of
    ``argsort(rng.random((draws, topics)))`` (topics sorted by name), one generator for the curve."""
    systems = sorted(per_system)
    topics = sorted({t for scores in per_system.values() for t in scores})
    matrix = np.array([[per_system[s][t] for t in topics] for s in systems])
    full = matrix.mean(axis=1)
    rng = np.random.default_rng(seed)
    curve = {}
    for k in range(1, len(topics)):
        chosen = np.argsort(rng.random((draws, len(topics))), axis=1)[:, :k]
        taus = [stats.kendalltau(full, matrix[:, c].mean(axis=1)).statistic for c in chosen]
        curve[k] = float(np.nanmean(taus))
    return curve


def difference_sd_median(per_system: dict[str, dict[str, float]]) -> float:
    """The median over system pairs of the sample sd of their per-topic differences."""
    return float(
        np.median(
            [
                np.std([per_system[a][t] - per_system[b][t] for t in per_system[a]], ddof=1)
                for a, b in itertools.combinations(sorted(per_system), 2)
            ]
        )
    )


def paired_t_power(n: int, effect: float, alpha: float) -> float:
    """Power of the two-sided one-sample t-test with n pairs at standardized effect ``effect``:
    T = (Z + effect sqrt(n)) / sqrt(V / df), V chi-square(df), integrated over V."""
    df = n - 1
    critical = stats.t.ppf(1 - alpha / 2, df)
    shift = effect * np.sqrt(n)

    def given(v):
        scale = critical * np.sqrt(v / df)
        return (stats.norm.sf(scale - shift) + stats.norm.cdf(-scale - shift)) * stats.chi2.pdf(v, df)

    return integrate.quad(given, stats.chi2.ppf(1e-12, df), stats.chi2.isf(1e-12, df), limit=200)[0]


def _round_half_up(x: float) -> int:
    return int(np.floor(x + 0.5))


def _modified(weights: dict[int, int], matched: set[int], references: int) -> float:
    """D / MaxWeight(Xa) with Xa the mean SCUs per reference rounded half up (NIST's modified score)."""
    ranked = sorted((w for w in weights.values() if w), reverse=True)
    xa = _round_half_up(sum(ranked) / references)
    return sum(weights.get(uid, 0) for uid in matched) / sum(ranked[:xa])


def read_pans(folder: Path) -> list[tuple[str, str, object]]:
    """(topic, peer system, parsed .pan) for every .pan file of a folder."""
    from annotation import formats

    out = []
    for pan in sorted(folder.glob("*.pan")):
        name = formats.parse_nist_filename(pan.name)
        out.append((name.topic, name.peer, formats.parse_peer_annotation(pan.read_bytes())[0]))
    return out


def subset_scores(pans, k: int) -> dict[str, dict[str, list[float]]]:
    """topic -> peer system -> its modified scores against the pyramids of every k of the topic's
    references (subsets in the order of ``itertools.combinations`` over the sorted reference ids),
    from the .pan files (``read_pans``; one annotation per peer): an SCU's weight is its
    contributors from the kept references, an SCU without one vanishes. k = the number of
    references gives the full pyramid's score."""
    out: dict[str, dict[str, list[float]]] = defaultdict(dict)
    weights_of = {}  # topic -> per subset: SCU uid -> weight (one pyramid per topic)
    for topic, peer, parsed in pans:
        if topic not in weights_of:
            references = sorted(r.id for r in parsed.pyramid.references)
            weights_of[topic] = [
                {scu.uid: sum(c.parts[0].reference in keep for c in scu.contributors) for scu in parsed.pyramid.scus}
                for keep in itertools.combinations(references, k)
            ]
        matched = {m.scu_uid for m in parsed.matches}
        scores = [_modified(weights, matched, k) for weights in weights_of[topic]]
        assert peer not in out[topic], f"{topic}: peer {peer} annotated twice"
        out[topic][peer] = scores
    return dict(out)


def reference_stability(pans, references: int, *, seed: int, draws: int) -> dict[int, float]:
    """k -> mean Kendall tau-b between the full ranking and rankings where each topic is scored
    against one of its k-reference pyramids, picked per draw as
    ``rng.integers(0, subsets, draws)`` topic by topic (topics sorted), k = 1 .. references - 1,
    one generator for the curve (every subset fits: no sampling of subsets)."""
    full = subset_scores(pans, references)
    topics = sorted(full)
    systems = sorted({s for t in topics for s in full[t]})
    full_means = np.array([np.mean([full[t][s][0] for t in topics]) for s in systems])
    rng = np.random.default_rng(seed)
    curve = {}
    for k in range(1, references):
        scored = subset_scores(pans, k)
        per_topic = [np.array([scored[t][s] for s in systems]).T for t in topics]  # (subsets, systems)
        picks = [rng.integers(0, len(scores), draws) for scores in per_topic]
        means = np.mean(
            [scores[pick] for scores, pick in zip(per_topic, picks, strict=True)], axis=0
        )  # (draws, systems)
        curve[k] = float(np.mean([stats.kendalltau(full_means, m).statistic for m in means]))
    return curve


def groups(ordered: list[str], significant: set[frozenset]) -> list[list[str]]:
    """Runs of systems (in the shown order) with no significant pair inside, each run kept only if
    no longer run contains it: every candidate run listed, the contained ones dropped."""
    runs = [
        ordered[i : j + 1]
        for i in range(len(ordered))
        for j in range(i, len(ordered))
        if not any(frozenset(p) in significant for p in itertools.combinations(ordered[i : j + 1], 2))
    ]
    return [r for r in runs if not any(set(r) < set(other) for other in runs)]


def system_correlation_interval(
    means: dict[str, tuple[float, float]], method: str, *, seed: int, resamples: int, confidence: float
) -> tuple[float, float]:
    """The system-level correlation's percentile interval: systems (sorted by name) drawn with
    replacement as ``default_rng(seed).integers(0, systems, (resamples, systems))``, scipy's
    correlation of the drawn systems' two means (a system drawn twice appears twice)."""
    func = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    systems = sorted(means)
    x, z = (np.array([means[s][i] for s in systems]) for i in (0, 1))
    rows = np.random.default_rng(seed).integers(0, len(systems), (resamples, len(systems)))
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.array([func(x[r], z[r]).statistic if np.ptp(x[r]) and np.ptp(z[r]) else np.nan for r in rows])
    alpha = (1 - confidence) / 2
    low, high = np.quantile(values[np.isfinite(values)], [alpha, 1 - alpha])
    return float(low), float(high)

"""Which differences between systems are real: the statistics part of a dashboard snapshot.

Computed on the workers with the other dashboard figures (``dashboard_snapshots.compute_payload``)
from the same score rows, so the statistics describe exactly the scores the pages show. Two views,
as on the scores page: peers only on ``modified`` (the official DUC score), and peers + references
on ``modified_jk`` (references scored against the pyramid of the others, SacreROUGE's footing).
Per view: every system's mean with its bootstrap interval, every pair tested (paired permutation
over shared topics, Holm-adjusted), the groups of systems that cannot be told apart, the power
table and the topic-stability curve. Peers only also get the SCU-level tests (both systems
annotated against one pyramid) and the reference-stability curve (references are never scored
against pyramids built from a subset of themselves). The pure statistics live in ``scoring``.

Everything is seeded (``SETTINGS``, stored in the payload and shown on the pages) and reproducible.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from django.conf import settings as django_settings

from annotation.corpus.models import PeerSummary
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import counted
from annotation.peers.scoring_inputs import load_annotations
from annotation.pyramids.scoring_inputs import load_pyramids
from scoring import intervals, power, significance, stability
from scoring.aggregate import system_scores
from scoring.model import Convention
from scoring.scores import scu_vectors

SETTINGS = {
    "seed": 20070401,  # any fixed number; shown so a reader can reproduce
    "confidence": intervals.CONFIDENCE,
    "mean_resamples": intervals.MEAN_RESAMPLES,
    "correlation_resamples": django_settings.METAEVAL_RESAMPLES,  # intervals.CORRELATION_RESAMPLES unless set
    "permutations": significance.PERMUTATIONS,
    "exact_up_to": significance.EXACT_UP_TO,
    "alpha": significance.ALPHA,
    "power": power.POWER,
    "draws": stability.DRAWS,
    "max_subsets": stability.MAX_SUBSETS,
}
VIEWS = {"peers": (("peer",), "modified"), "peers+references": (("peer", "reference"), "modified_jk")}
SYSTEM_STAT_KEYS = (
    "dataset",
    "view",
    "score",
    "system",
    "kind",
    "topics",
    "adjudicated",
    "mean",
    "low",
    "high",
    "confidence",
    "groups",
    "seed",
    "resamples",
)
PAIR_KEYS = (
    "dataset",
    "view",
    "score",
    "a",
    "a_kind",
    "b",
    "b_kind",
    "adjudicated_a",
    "adjudicated_b",
    "n",
    "difference",
    "p_value",
    "p_holm",
    "significant",
    "better",
    "exact",
    "alpha",
    "seed",
    "resamples",
)
SCU_TEST_KEYS = (
    "dataset",
    "a",
    "b",
    "adjudicated_a",
    "adjudicated_b",
    "topics",
    "scus",
    "only_a",
    "only_b",
    "difference",
    "p_value",
    "p_holm",
    "significant",
    "exact",
    "seed",
    "resamples",
)
POWER_KEYS = (
    "dataset",
    "view",
    "score",
    "adjudicated",
    "difference",
    "typical",
    "easy",
    "hard",
    "alpha",
    "power",
    "pairs",
    "topics",
)
STABILITY_KEYS = (
    "dataset",
    "view",
    "score",
    "adjudicated",
    "curve",
    "k",
    "mean",
    "sd",
    "low",
    "high",
    "draws",
    "undefined",
    "subsets",
    "seed",
)


def _label(key: tuple[str, str]) -> str:
    """ "3" for peer system 3, "A" for reference A (kinds never share a name in a view's tables)."""
    return key[1]


def by_system(
    rows: Iterable[dict], summarizer_of, kinds: tuple[str, ...], score: str
) -> dict[tuple[str, str], dict[str, float]]:
    """(kind, system) -> topic -> score: one value per topic (several annotations averaged), as
    ``dashboards.system_rows`` averages, so the means here are the page's means."""
    items = ((r["topic"], summarizer_of(r), r[score]) for r in rows if summarizer_of(r)[0] in kinds)
    return {key: dict(s.by_topic) for key, s in system_scores(items).items() if s.by_topic}


def _ordered(data: dict) -> list:
    """Systems best first (mean over their topics), then by name: the order of tables and groups."""

    def key(k):
        values = list(data[k].values())
        return (-sum(values) / len(values), k[0], k[1].zfill(8) if k[1].isdigit() else k[1])

    return sorted(data, key=key)


def view_statistics(data: dict[tuple[str, str], dict[str, float]], seed: int) -> dict:
    """Intervals, pairwise tests, groups, power and topic stability of one view (kept in the process
    under ``data`` itself: ``_remembered``)."""
    return _remembered(("view", seed, _exactly(data)), lambda: _view_statistics(data, seed))


def _view_statistics(data: dict[tuple[str, str], dict[str, float]], seed: int) -> dict:
    order = _ordered(data)
    ordered = {k: data[k] for k in order}
    cis = intervals.system_intervals(ordered, seed=seed)
    comparisons = significance.pairwise(ordered, seed=seed)
    groups = significance.groups(order, comparisons)
    letters = {
        k: "".join(chr(ord("a") + i) if i < 26 else f"[{i + 1}]" for i, g in enumerate(groups) if k in g) for k in order
    }
    systems = [
        {
            "system": _label(k),
            "kind": k[0],
            "topics": len(data[k]),
            "mean": cis[k].value,
            "low": cis[k].low,
            "high": cis[k].high,
            "reason": cis[k].reason,
            "groups": letters[k],
        }
        for k in order
    ]
    pairs = [
        {
            "a": _label(c.a),
            "a_kind": c.a[0],
            "b": _label(c.b),
            "b_kind": c.b[0],
            **{k: v for k, v in c.as_dict().items() if k not in ("a", "b", "better")},
            "better": _label(c.better) if c.better else None,
        }
        for c in comparisons
    ]
    return {
        "systems": systems,
        "pairs": pairs,
        "groups": [[_label(k) for k in g] for g in groups],
        "power": power.power_table(ordered).as_dict(),
        "topic_stability": [p.as_dict() for p in stability.topic_stability(ordered, seed=seed)],
    }


class PeerRow(NamedTuple):
    """A peer annotation behind the score rows, as the statistics read it."""

    pk: int
    pyramid_id: int
    topic_id: int
    topic: str  # the topic's external id
    system: str


def _peer_annotations(topics) -> list[PeerRow]:
    """The peer annotations behind the score rows (``results.score_rows`` selects the same ones: the
    adjudicated version of a peer where there is one), in the models' order; rows, not model
    instances (a fifth of the time of reading them)."""
    return [
        PeerRow(pk, pyramid_id, topic_id, topic, PeerSummary.system_of(system_id, external_id))
        for pk, pyramid_id, topic_id, topic, system_id, external_id in counted(
            PeerAnnotation.objects.filter(pyramid__topic__in=topics), for_scores=True
        ).values_list(
            "pk",
            "pyramid_id",
            "pyramid__topic_id",
            "pyramid__topic__external_id",
            "peer__system_id",
            "peer__external_id",
        )
    ]


def _natural(system: str) -> tuple:
    return (0, int(system), "") if system.isdigit() else (1, 0, system)


@dataclass
class PeerInputs:
    """What the SCU-level tests and the reference-stability curve read, loaded once per snapshot:
    per topic the pyramid most of its peers were annotated against, each peer system's 0/1 SCU
    vector over it (the mean over annotators) and the annotations themselves."""

    vectors: dict[str, dict[str, list[float]]]
    topics: dict[str, stability.TopicAnnotations]
    _scu_tests: list[dict] | None = None

    def scu_tests(self, seed: int) -> list[dict]:
        """Every pair of peer systems (natural order of their ids), Holm-adjusted together; the same
        under both conventions (vectors do not depend on weights), so computed once."""
        if self._scu_tests is None:
            vectors = tuple(  # the key: every vector by its bytes (exact), systems and topics sorted
                sorted(
                    (system, tuple(sorted((topic, np.asarray(v, dtype=float).tobytes()) for topic, v in per.items())))
                    for system, per in self.vectors.items()
                )
            )
            self._scu_tests = _remembered(("scu_tests", seed, vectors), lambda: self._computed_scu_tests(seed))
        return self._scu_tests

    def _computed_scu_tests(self, seed: int) -> list[dict]:
        order = sorted(self.vectors, key=_natural)
        tests = [
            significance.scu_test(a, b, self.vectors, seed=seed) for i, a in enumerate(order) for b in order[i + 1 :]
        ]
        adjusted = significance.holm([t.test.p_value for t in tests])
        return [
            t.as_dict() | {"p_holm": p, "significant": p is not None and p < significance.ALPHA}
            for t, p in zip(tests, adjusted, strict=True)
        ]


# The reference-stability curve scores each topic under every subset of its references (a fifth to
# a third of a dashboard's CPU); the scores are kept in the process between snapshots under the
# topic's data (``stability.reference_stability``'s memo), so after a save in one topic that topic
# alone is scored again. The topics used longest ago are dropped beyond this many (their data and
# scores, ~0.2 MB a topic of 120 SCUs and 22 peers: ~20 MB at most; a DUC-sized dataset has 50).
_STABILITY_MEMO: dict = {}
STABILITY_MEMO_TOPICS = 100

# A view's statistics and the SCU-level tests are functions of their input scores alone (seeded:
# ``SETTINGS``), and most snapshots compute them again from the same scores: while an annotator
# saves matches in an unfinished annotation (which counts for no score) the topic's data changes
# and the snapshot is recomputed, and the two conventions often give the same peer scores. They
# are kept in the process under those scores themselves, compared exactly (``_exactly``: every
# system, topic and value, each value by its repr), so a kept figure answers only the very scores
# it was computed from. 16 results at most (a dataset's four views and its SCU tests; ~0.1-1 MB
# each), the one used longest ago dropped first. Kept results are shared by the payloads that use
# them: they are serialised, never modified.
_FIGURES_MEMO: dict = {}
FIGURES_MEMO_ENTRIES = 16
_MEMO_LOCK = threading.Lock()  # a web process's threads may compute a first snapshot each


def _exactly(data: dict[tuple[str, str], dict[str, float]]) -> tuple:
    """``data`` as a memo key: systems and topics in their order (the bootstrap pairs resampled
    positions with the values in that order), each value by its repr (exact: 0.0 and -0.0 are equal
    as floats but not as figures)."""
    return tuple((system, tuple((topic, repr(v)) for topic, v in scores.items())) for system, scores in data.items())


def _remembered(key: tuple, compute):
    """``compute()``, kept in ``_FIGURES_MEMO`` under ``key`` (its whole input); computed outside the
    lock, so two threads may compute one key at once (the same result: the later one is kept)."""
    with _MEMO_LOCK:
        found = _FIGURES_MEMO.pop(key, None)
        if found is not None:
            _FIGURES_MEMO[key] = found  # used last: dropped last
            return found
    found = compute()
    with _MEMO_LOCK:
        _FIGURES_MEMO[key] = found
        while len(_FIGURES_MEMO) > FIGURES_MEMO_ENTRIES:
            del _FIGURES_MEMO[next(iter(_FIGURES_MEMO))]
    return found


def load_peer_inputs(topics) -> PeerInputs:
    annotations = _peer_annotations(topics)
    counts: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))  # topic -> pyramid -> annotations
    for a in annotations:
        counts[a.topic_id][a.pyramid_id] += 1
    chosen = {topic_id: min(found, key=lambda pid: (-found[pid], pid)) for topic_id, found in counts.items()}
    used = [a for a in annotations if chosen[a.topic_id] == a.pyramid_id]
    pyramids = load_pyramids(set(chosen.values()))
    inputs = load_annotations(a.pk for a in used)
    by_pyramid: dict[int, list[PeerRow]] = defaultdict(list)
    for a in used:
        by_pyramid[a.pyramid_id].append(a)
    vectors: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    pairs: dict[str, list] = defaultdict(list)
    pyramid_of = {}
    for pyramid_id, found in by_pyramid.items():
        for a, vector in zip(found, scu_vectors(pyramids[pyramid_id], [inputs[a.pk] for a in found]), strict=True):
            pyramid_of[a.topic] = pyramid_id
            vectors[a.system][a.topic].append(vector)
    for a in used:
        pairs[a.topic].append((a.system, inputs[a.pk]))
    mean_vectors = {
        s: {t: [float(v) for v in np.mean(vs, axis=0)] for t, vs in per_topic.items()}
        for s, per_topic in vectors.items()
    }
    return PeerInputs(
        mean_vectors, {t: stability.TopicAnnotations(pyramids[pyramid_of[t]], p) for t, p in pairs.items()}
    )


def compute(dataset_name: str, rows: list[dict], summarizer_of, convention: Convention, peers: PeerInputs) -> dict:
    """The statistics of one convention's rows (``summarizer_of(row)`` -> (kind, system))."""
    seed = SETTINGS["seed"]
    views = {}
    for view, (kinds, score) in VIEWS.items():
        data = by_system(rows, summarizer_of, kinds, score)
        views[view] = {"score": score, **view_statistics(data, seed)}
    views["peers"]["scu_tests"] = peers.scu_tests(seed)
    with _MEMO_LOCK:
        curve = stability.reference_stability(peers.topics, convention, seed=seed, memo=_STABILITY_MEMO)
        while len(_STABILITY_MEMO) > STABILITY_MEMO_TOPICS:
            del _STABILITY_MEMO[next(iter(_STABILITY_MEMO))]
    views["peers"]["reference_stability"] = [p.as_dict() for p in curve]
    return {"settings": dict(SETTINGS), "dataset": dataset_name, "views": views}


# --- CSV/JSON rows ---------------------------------------------------------------------------

TABLES = ("systems", "pairs", "scu_tests", "power", "stability", "metaeval")


def adjudicated_topics(per_system: Iterable[dict]) -> dict[tuple[str, str], int]:
    """(kind, system) -> how many of its topics' scores rest on an adjudicated version, from the
    snapshot's per-system rows (``figures.system_rows``: ``results.version_of`` of each score row)."""
    return {(r["kind"], r["system"]): r["adjudicated"] for r in per_system}


def download_rows(figures: dict, table: str) -> tuple[list[dict], tuple[str, ...]]:
    """Rows and keys of one downloadable table of a convention's stored figures (``TABLES``).

    Every table says which version its scores rest on, as the score tables do: ``adjudicated`` on
    a system's row (``adjudicated_a``/``adjudicated_b`` on a pair's) is how many of the system's
    topic scores rest on an adjudicated version rather than the annotators' own; on the tables
    about a whole view (power, stability, meta-evaluation intervals) how many of the view's
    (system, topic) scores do. 0 everywhere: no score rests on an adjudicated version."""
    adjudicated = adjudicated_topics(figures["per_system"])
    if table == "metaeval":
        rows = metaeval_interval_rows(figures["metaeval_intervals"], figures["statistics"]["dataset"])
        return [r | {"adjudicated": _in_view(adjudicated, r["summarizers"])} for r in rows], METAEVAL_INTERVAL_KEYS
    return table_rows(figures["statistics"], table, adjudicated)


def _in_view(adjudicated: dict[tuple[str, str], int], view: str) -> int:
    kinds = VIEWS[view][0]
    return sum(n for (kind, _), n in adjudicated.items() if kind in kinds)


def table_rows(
    statistics: dict, table: str, adjudicated: dict[tuple[str, str], int]
) -> tuple[list[dict], tuple[str, ...]]:
    """Flat rows of one statistics table (``systems``, ``pairs``, ``scu_tests``, ``power``,
    ``stability``) with their keys, for downloads; ``adjudicated``: ``adjudicated_topics``."""
    settings, dataset = statistics["settings"], statistics["dataset"]
    out: list[dict] = []
    for view, figures in statistics["views"].items():
        base = {"dataset": dataset, "view": view, "score": figures["score"], "seed": settings["seed"]}
        whole = {"adjudicated": _in_view(adjudicated, view)}
        if table == "systems":
            out += [
                base
                | r
                | {
                    "adjudicated": adjudicated.get((r["kind"], r["system"]), 0),
                    "confidence": settings["confidence"],
                    "resamples": settings["mean_resamples"],
                }
                for r in figures["systems"]
            ]
        elif table == "pairs":
            out += [
                base
                | r
                | {
                    "adjudicated_a": adjudicated.get((r["a_kind"], r["a"]), 0),
                    "adjudicated_b": adjudicated.get((r["b_kind"], r["b"]), 0),
                }
                for r in figures["pairs"]
            ]
        elif table == "scu_tests" and "scu_tests" in figures:
            out += [
                base
                | r
                | {
                    "adjudicated_a": adjudicated.get(("peer", r["a"]), 0),
                    "adjudicated_b": adjudicated.get(("peer", r["b"]), 0),
                }
                for r in figures["scu_tests"]
            ]
        elif table == "power":
            p = figures["power"]
            out += [
                base
                | whole
                | r
                | {"alpha": p["alpha"], "power": p["power"], "pairs": p["pairs"], "topics": p["topics"]}
                for r in p["rows"]
            ]
        elif table == "stability":
            for curve in ("reference_stability", "topic_stability"):
                out += [base | whole | {"curve": curve.split("_")[0] + "s"} | r for r in figures.get(curve, [])]
    keys = {
        "systems": SYSTEM_STAT_KEYS,
        "pairs": PAIR_KEYS,
        "scu_tests": SCU_TEST_KEYS,
        "power": POWER_KEYS,
        "stability": STABILITY_KEYS,
    }
    if table not in keys:
        raise ValueError(f"table must be one of {sorted(keys)}, not {table!r}")
    return out, keys[table]


# --- meta-evaluation intervals ---------------------------------------------------------------

# The rows the meta-evaluation page shows by default (SacreROUGE's footing): intervals cost ~0.1-0.5 s
# each, so the other score's rows go without.
METAEVAL_INTERVALS = {("peers", "modified"), ("peers+references", "modified_jk")}
METAEVAL_INTERVAL_KEYS = (
    "dataset",
    "metric",
    "summarizers",
    "adjudicated",
    "score",
    "level",
    "method",
    "value",
    "low",
    "high",
    "n",
    "confidence",
    "resamples",
    "undefined_replicates",
    "seed",
    "reason",
)


def correlation_intervals(pairs: dict, seed: int = SETTINGS["seed"]) -> dict[str, dict[str, dict]]:
    """level -> method -> the correlation with its bootstrap interval (``scoring.intervals``)."""
    resamples = SETTINGS["correlation_resamples"]
    return {
        level: {
            method: intervals.correlation_interval(pairs, level, method, seed=seed, resamples=resamples).as_dict()
            for method in ("pearson", "spearman", "kendall")
        }
        for level in intervals.LEVELS
    }


def metaeval_interval_rows(found: list[dict], dataset: str) -> list[dict]:
    """Flat rows (one per metric, summarizers, level and method) of the stored intervals."""
    return [
        {
            "dataset": dataset,
            "metric": f["metric"],
            "summarizers": f["summarizers"],
            "score": f["score"],
            "level": level,
            "method": method,
            **figures,
        }
        for f in found
        for level, methods in f["levels"].items()
        for method, figures in methods.items()
    ]

"""The data behind each dashboard chart, as flat rows: the page passes them to the browser with
``json_script`` (``static/dashboards/charts.js`` draws them with Chart.js) and the chart's CSV
link downloads the very same rows, so what is plotted can always be checked.

Axes are never clipped: charts.js fits every range to the data, error bars included (the
hand-drawn SVG chart used to cut mean ± sd at 0 and at its top tick).
"""

from __future__ import annotations

SYSTEM_KEYS = (
    "system",
    "kind",
    "topics",
    "adjudicated",
    "mean",
    "low",
    "high",
    "sd",
    "min",
    "max",
    "score",
    "confidence",
    "seed",
)
TIER_KEYS = ("topic", "pyramid", "creator", "references", "weight", "scus")
AGREEMENT_KEYS = ("peer", "a", "b", "a_score", "b_score", "difference", "flagged")
STABILITY_KEYS = ("curve", "k", "mean", "sd", "low", "high", "draws", "subsets")
LITE_KEYS = ("system", "lightweight", "expert", "summaries")
KEYS = {
    "systems": SYSTEM_KEYS,
    "tiers": TIER_KEYS,
    "agreement": AGREEMENT_KEYS,
    "stability": STABILITY_KEYS,
    "lite": LITE_KEYS,
}


def _natural(text: str) -> tuple:
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def system_rows(per_system: list[dict], stats: dict, score: str) -> list[dict]:
    """Per system (best first): the mean of ``score`` over topics, its bootstrap interval (from the
    stored statistics), the sd and the min–max over topics; ``adjudicated``: how many of its topic
    scores rest on an adjudicated version or pyramid (as the score tables say)."""
    intervals = {s["system"]: s for s in stats["systems"]}
    rows = []
    for r in per_system:
        if r[score] is None:
            continue
        ci = intervals.get(r["system"], {})
        rows.append(
            {
                "system": r["system"],
                "kind": r["kind"],
                "topics": r[f"{score}_n"],
                "adjudicated": r["adjudicated"],
                "mean": r[score],
                "low": ci.get("low"),
                "high": ci.get("high"),
                "sd": r[f"{score}_sd"],
                "min": r[f"{score}_min"],
                "max": r[f"{score}_max"],
                "score": score,
                "confidence": stats["settings"]["confidence"],
                "seed": stats["settings"]["seed"],
            }
        )
    return sorted(rows, key=lambda r: (-r["mean"], _natural(r["system"])))


def tier_rows(tiers: list[dict]) -> list[dict]:
    """One row per pyramid and weight: how many SCUs of that weight (empty tiers included)."""
    return [
        {
            "topic": h["topic"],
            "pyramid": h["pyramid"],
            "creator": h["creator"],
            "references": h["references"],
            "weight": t["weight"],
            "scus": t["scus"],
        }
        for h in tiers
        for t in h["tiers"]
    ]


def agreement_rows(comparison: dict, highlight: str | None = None) -> list[dict]:
    """Per peer both compared annotators scored: the two modified scores and their difference."""
    return [
        {
            "peer": p["peer"],
            "a": comparison["a"],
            "b": comparison["b"],
            "a_score": p["x"],
            "b_score": p["y"],
            "difference": p["diff"],
            "flagged": p["flagged"],
            "highlight": p["peer"] == highlight,
        }
        for p in comparison["points"]
    ]


def stability_rows(stats: dict) -> list[dict]:
    """The stability curves' points: ``references`` (peers only) and ``topics``."""
    out = []
    for curve, key in (("references", "reference_stability"), ("topics", "topic_stability")):
        out += [
            {"curve": curve, **{k: p.get(k) for k in STABILITY_KEYS if k != "curve"}}
            for p in stats.get(key, [])
            if p["mean"] is not None
        ]
    return out


def lite_rows(systems: list[dict]) -> list[dict]:
    """Per system: its lightweight-pyramid score (x) and expert modified score (y), means over the
    summaries both scored (``lightweight_dashboard.comparison``)."""
    return [{k: s[k] for k in LITE_KEYS} for s in systems]

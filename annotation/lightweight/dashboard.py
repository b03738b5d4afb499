"""What the coordinator sees of a lightweight-pyramid run: progress, costs, the stored scores
(workers, crowd alpha per topic, systems with spread) and, where the same peers also have expert
pyramid scores (NIST modified score, current stored values), the correlation of the two methods
at summary and system level (Pearson, Spearman, Kendall) with the points of the scatter plot.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import mean

from annotation.lightweight.models import LightweightPyramid
from annotation.lightweight.scores import stored
from annotation.lightweight.work import costs, progress
from annotation.peers.models import AnnotationScore
from scoring.correlation import kendall, pearson, spearman


def expert_scores(run: LightweightPyramid) -> dict[tuple[str, str], float]:
    """(topic, peer external id) -> mean current NIST modified score over its expert annotations."""
    values = defaultdict(list)
    for score in AnnotationScore.objects.filter(
        convention="nist", annotation__peer__topic__dataset=run.dataset
    ).select_related("annotation__peer__topic", "annotation__pyramid"):
        if score.is_current and score.values.get("modified") is not None:
            peer = score.annotation.peer
            values[(peer.topic.external_id, peer.external_id)].append(score.values["modified"])
    return {k: mean(v) for k, v in values.items()}


def _correlations(pairs: list[tuple[float, float]]) -> dict:
    x, y = [p[0] for p in pairs], [p[1] for p in pairs]
    return {c.method: c.as_dict() for c in (pearson(x, y), spearman(x, y), kendall(x, y))}


def comparison(summaries: list[dict], expert: dict[tuple[str, str], float]) -> dict | None:
    """Summary- and system-level correlation of lightweight and expert scores over the shared peers."""
    points = [
        {
            "topic": s["topic"],
            "summary": s["summary"],
            "system": s["system"],
            "lightweight": s["score"],
            "expert": expert[(s["topic"], s["summary"])],
        }
        for s in summaries
        if (s["topic"], s["summary"]) in expert
    ]
    if not points:
        return None
    by_system = defaultdict(list)
    for p in points:
        by_system[p["system"]].append((p["lightweight"], p["expert"]))
    systems = [
        {"system": k, "lightweight": mean(a for a, _ in v), "expert": mean(b for _, b in v), "summaries": len(v)}
        for k, v in sorted(by_system.items())
    ]
    return {
        "summary_level": _correlations([(p["lightweight"], p["expert"]) for p in points]),
        "system_level": _correlations([(s["lightweight"], s["expert"]) for s in systems]),
        "points": points,
        "systems": systems,
    }


def dashboard(run: LightweightPyramid) -> dict:
    figures = progress(run)
    payload, current = stored(run)
    return {
        "progress": figures,
        "costs": costs(run, figures),
        "current": current,
        "scores": payload,
        "comparison": comparison(payload["summaries"], expert_scores(run)) if payload else None,
    }

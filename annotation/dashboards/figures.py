"""The figures behind the coordinator dashboards, as JSON-ready dicts: scores per topic and per
system, tier histograms of the pyramids, and the meta-evaluation of the pyramid score against
imported judgments.

Every score comes from ``results.score_rows`` (the rows ``export_scores`` writes), so a dashboard
can never disagree with an export; averaging lives in ``scoring.aggregate`` and correlations in
``scoring.metaeval``. This module only selects data and shapes the output.
"""

from __future__ import annotations

from collections.abc import Iterable

from annotation.corpus.models import PeerSummary, ReferenceSummary
from annotation.dashboards.models import Judgment
from annotation.peers.results import SCORE_KEYS, is_adjudicated_pyramid, rests_on_adjudication, score_rows, topics_of
from annotation.pyramids.models import Pyramid
from annotation.pyramids.scoring_inputs import load_pyramids
from scoring.aggregate import system_scores, tier_histogram
from scoring.metaeval import Observation, meta_evaluate
from scoring.model import Convention

SCORES = ("original", "modified", "modified_jk")
SYSTEM_KEYS = ("dataset", "system", "kind", "topics", "adjudicated", "convention") + tuple(
    f"{score}{suffix}" for score in SCORES for suffix in ("", "_n", "_sd", "_min", "_max")
)
SUMMARIZERS = {"peers": ("peer",), "peers+references": ("peer", "reference")}
METAEVAL_KEYS = (
    "dataset",
    "convention",
    "score",
    "metric",
    "summarizers",
    "level",
    "pearson",
    "spearman",
    "kendall",
    "n",
    "summaries",
    "topics_skipped",
    "without_judgment",
    "without_score",
    "pearson_p",
    "spearman_p",
    "kendall_p",
    "reason",
)


def _summarizers(topics) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(dataset, topic, summary external id) -> (kind, system).

    A peer's system is ``PeerSummary.system`` (its system id, else its external id); a reference's
    is its external id (in DUC the letter names the same human summarizer in every topic).
    """
    found = {}
    for peer in (
        PeerSummary.objects.filter(topic__in=topics)
        .select_related("topic__dataset")
        .only("external_id", "system_id", "topic__external_id", "topic__dataset__name")
    ):
        found[(peer.topic.dataset.name, peer.topic.external_id, peer.external_id)] = ("peer", peer.system)
    for dataset, topic, ref in ReferenceSummary.objects.filter(topic__in=topics).values_list(
        "topic__dataset__name", "topic__external_id", "external_id"
    ):
        found[(dataset, topic, ref)] = ("reference", ref)
    return found


def _summarizer_of(row: dict, summarizers: dict) -> tuple[str, str]:
    """(kind, system) of a score row; a summary missing from the lookup stands for itself."""
    return summarizers.get((row["dataset"], row["topic"], row["summary"]), (row["kind"], row["summary"]))


def system_rows(rows: list[dict], summarizers: dict, convention: Convention) -> list[dict]:
    """One row per (dataset, kind, system): each score's mean over topics, n, sd, min and max.

    Several rows of one summary in one topic (two annotators, two pyramids) count once for that
    topic (``aggregate.topic_means``). ``adjudicated``: how many of the topics' scores rest on an
    adjudicated version or pyramid (``results.version_of``). Ordered by dataset, kind, then modified score, best first.
    """

    def key(row):
        return (row["dataset"], *_summarizer_of(row, summarizers))

    by_score = {score: system_scores((r["topic"], key(r), r[score]) for r in rows) for score in SCORES}
    topics: dict[tuple, set] = {}
    adjudicated: dict[tuple, set] = {}
    for r in rows:
        topics.setdefault(key(r), set()).add(r["topic"])
        if rests_on_adjudication(r.get("version", "")):
            adjudicated.setdefault(key(r), set()).add(r["topic"])
    out = []
    for (dataset, kind, system), seen in topics.items():
        row = {
            "dataset": dataset,
            "system": system,
            "kind": kind,
            "topics": len(seen),
            "adjudicated": len(adjudicated.get((dataset, kind, system), ())),
            "convention": convention.value,
        }
        for score in SCORES:
            s = by_score[score].get((dataset, kind, system))
            figures = s.spread.as_dict() if s else dict.fromkeys(("n", "mean", "sd", "min", "max"))
            row |= {
                score: figures["mean"],
                f"{score}_n": figures["n"] or 0,
                f"{score}_sd": figures["sd"],
                f"{score}_min": figures["min"],
                f"{score}_max": figures["max"],
            }
        out.append(row)
    return sorted(
        out, key=lambda r: (r["dataset"], r["kind"], r["modified"] is None, -(r["modified"] or 0), r["system"])
    )


def score_dashboard(
    dataset_name: str | None, convention: Convention = Convention.NIST, *, include_references: bool = True
) -> dict:
    """Per-topic rows (the ``export_scores`` rows and keys) and per-system means with their spread."""
    convention = Convention(convention)
    topics = topics_of(dataset_name)
    rows = score_rows(topics, convention, include_references=include_references)
    return {
        "dataset": dataset_name,
        "convention": convention.value,
        "include_references": include_references,
        "topic_keys": list(SCORE_KEYS),
        "per_topic": rows,
        "system_keys": list(SYSTEM_KEYS),
        "per_system": system_rows(rows, _summarizers(topics), convention),
    }


def tier_histograms(dataset_name: str | None, convention: Convention = Convention.NIST) -> list[dict]:
    """For each pyramid: weight -> number of SCUs (every tier from 1 up, empty ones included).
    ``creator`` names who built it (``adjudicated`` for a topic's adjudicated pyramid)."""
    convention = Convention(convention)
    return tier_histograms_by_convention(dataset_name, (convention,))[convention]


def tier_histograms_by_convention(
    dataset_name: str | None, conventions: Iterable[Convention]
) -> dict[Convention, list[dict]]:
    """``tier_histograms`` under each of these conventions, the pyramids read once (a dashboard
    snapshot draws both conventions: reading the pyramids is most of the cost)."""
    pyramids = list(
        Pyramid.objects.filter(topic__in=topics_of(dataset_name))
        .select_related("topic__dataset", "creator")
        .order_by("topic__dataset__name", "topic__external_id", "id")
        .annotate(adjudicated=is_adjudicated_pyramid())
    )
    inputs = load_pyramids(p.pk for p in pyramids)
    out: dict[Convention, list[dict]] = {}
    for convention in map(Convention, conventions):
        out[convention] = []
        for p in pyramids:
            tiers = tier_histogram(inputs[p.pk], convention)
            out[convention].append(
                {
                    "dataset": p.topic.dataset.name,
                    "topic": p.topic.external_id,
                    "pyramid": p.pk,
                    "creator": p.creator.username if p.creator_id else ("adjudicated" if p.adjudicated else ""),
                    "references": inputs[p.pk].n,
                    "scus": sum(tiers.values()),
                    "tiers": [{"weight": w, "scus": k} for w, k in tiers.items()],
                    "convention": convention.value,
                }
            )
    return out


def _observations(rows, judgments, summarizers, score: str, pyramid_metric: str) -> dict[str, list]:
    """dataset -> [(kind, Observation)]: the pyramid score of every scored row, every judgment."""
    out: dict[str, list] = {}
    for r in rows:
        kind, system = _summarizer_of(r, summarizers)
        out.setdefault(r["dataset"], []).append((kind, Observation(r["topic"], system, {pyramid_metric: r[score]})))
    for dataset, topic, summary, metric, value in judgments:
        kind, system = summarizers.get((dataset, topic, summary), (None, summary))
        out.setdefault(dataset, []).append((kind, Observation(topic, system, {metric: value})))
    return out


def _table_rows(meta, *, dataset, convention, score, metric, summarizers) -> list[dict]:
    """The two rows (summary level, system level) of one metric and one choice of summarizers."""
    base = {
        "dataset": dataset,
        "convention": convention.value,
        "score": score,
        "metric": metric,
        "summarizers": summarizers,
        "without_judgment": meta.pairs.only_x,
        "without_score": meta.pairs.only_y,
    }
    summary = {
        "level": "summary",
        "n": meta.summary["pearson"].topics,
        "summaries": meta.summary["pearson"].summaries,
        "topics_skipped": len(meta.summary["pearson"].skipped),
    }
    system = {
        "level": "system",
        "n": meta.system["pearson"].correlation.n,
        "summaries": meta.system["pearson"].summaries,
        "topics_skipped": None,
    }
    for method in ("pearson", "spearman", "kendall"):
        s, c = meta.summary[method], meta.system[method].correlation
        summary |= {method: s.value, f"{method}_p": None}
        system |= {method: c.value, f"{method}_p": c.p_value}
    summary["reason"] = meta.summary["pearson"].reason
    system["reason"] = meta.system["pearson"].correlation.reason
    return [base | summary, base | system]


def metaeval_table(
    dataset_name: str | None, convention: Convention = Convention.NIST, *, score: str = "modified"
) -> dict:
    """Correlations of the pyramid ``score`` with every imported judgment metric, SacreROUGE style.

    Per dataset (systems of different datasets are never mixed), per metric, for peers only and for
    peers + references, at summary level (mean over topics of per-topic correlations; n = topics
    averaged) and system level (correlation of per-system means; n = systems). ``details`` holds
    per-topic correlations, skipped topics with reasons and the system means (scatter plots).
    With references included, ``score="modified_jk"`` puts peers on the same n-1 reference footing
    as the references (SacreROUGE's tables compare ``_jk`` scores for that reason).
    """
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, not {score!r}")
    convention = Convention(convention)
    topics = topics_of(dataset_name)
    pyramid_metric = f"pyramid_{score}"
    judgments = list(
        Judgment.objects.filter(topic__in=topics).values_list(
            "topic__dataset__name", "topic__external_id", "summary", "metric", "value"
        )
    )
    rows = score_rows(topics, convention, include_references=True)
    by_dataset = _observations(rows, judgments, _summarizers(topics), score, pyramid_metric)
    metrics = {d: sorted({m for dd, _, _, m, _ in judgments if dd == d}) for d in by_dataset}
    table, details = [], []
    for dataset in sorted(by_dataset):
        for metric in metrics[dataset]:
            for label, kinds in SUMMARIZERS.items():
                meta = meta_evaluate((o for k, o in by_dataset[dataset] if k in kinds), pyramid_metric, metric)
                context = dict(dataset=dataset, convention=convention, score=score, metric=metric, summarizers=label)
                table += _table_rows(meta, **context)
                details.append({"dataset": dataset, "metric": metric, "summarizers": label, **meta.as_dict()})
    return {
        "dataset": dataset_name,
        "convention": convention.value,
        "score": score,
        "keys": list(METAEVAL_KEYS),
        "rows": table,
        "details": details,
    }

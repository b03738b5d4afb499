"""Dashboard figures on a hand-scored dataset: scores per topic and system, tier histograms and the
meta-evaluation table, each checked against an independent computation (hand values, numpy, scipy)."""

import json
from collections import defaultdict

import numpy as np
import pytest
from scipy import stats

from annotation.dashboards.figures import METAEVAL_KEYS, SYSTEM_KEYS, metaeval_table, score_dashboard, tier_histograms
from annotation.peers.results import SCORE_KEYS, score_rows, topics_of

from tests.dashboards import toy
from tests.dashboards.judged import import_judgments_csv

pytestmark = pytest.mark.django_db
SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
# Content judgments by hand (peers and references).
CONTENT = {
    ("T1", "1"): 4,
    ("T1", "2"): 2,
    ("T1", "3"): 5,
    ("T2", "1"): 1,
    ("T2", "2"): 4,
    ("T2", "3"): 2,
    ("T1", "A"): 5,
    ("T1", "B"): 4,
    ("T1", "C"): 5,
    ("T2", "A"): 4,
    ("T2", "B"): 5,
    ("T2", "C"): 3,
}


@pytest.fixture
def dataset():
    d = toy.build()
    lines = "".join(f"{t},{s},content,{v}\n" for (t, s), v in CONTENT.items())
    import_judgments_csv(d, "topic,summary,metric,value\n" + lines + "T1,1,rouge,0.3\nT1,2,rouge,0.1\nT1,3,rouge,0.2\n")
    return d


def test_per_topic_rows_are_the_export_rows(dataset):
    board = score_dashboard("Toy", include_references=False)
    assert board["per_topic"] == score_rows(topics_of("Toy"), include_references=False)
    assert board["topic_keys"] == list(SCORE_KEYS) and board["system_keys"] == list(SYSTEM_KEYS)
    by_annotation = {(r["topic"], r["summary"], r["annotator"]): r["modified"] for r in board["per_topic"]}
    assert by_annotation[("T1", "1", "ann1")] == pytest.approx(0.8) and by_annotation[
        ("T1", "1", "ann2")
    ] == pytest.approx(0.6)
    assert json.loads(json.dumps(board)) == board


def test_per_system_means_by_hand_and_numpy(dataset):
    board = score_dashboard("Toy", include_references=False)
    systems = {r["system"]: r for r in board["per_system"]}
    assert set(systems) == {"1", "2", "3"} and {r["kind"] for r in systems.values()} == {"peer"}
    # modified by hand: 1 = (0.7 + 0.4) / 2, 2 = (0.4 + 0.8) / 2, 3 = (1.0 + 0.2) / 2
    assert systems["1"]["modified"] == pytest.approx(0.55)
    assert systems["2"]["modified"] == pytest.approx(0.6) and systems["3"]["modified"] == pytest.approx(0.6)
    assert [r["system"] for r in board["per_system"]] == ["2", "3", "1"]  # best first
    # Every score: numpy over the per-topic means of the rows (annotators averaged within a topic).
    for score in ("original", "modified", "modified_jk"):
        cells = defaultdict(list)
        for r in board["per_topic"]:
            cells[(r["summary"], r["topic"])].append(r[score])
        for system, row in systems.items():
            values = np.array([np.mean(cells[(system, t)]) for t in ("T1", "T2")])
            assert row[f"{score}_n"] == 2 and row["topics"] == 2
            assert row[score] == pytest.approx(values.mean(), abs=1e-12)
            assert row[f"{score}_sd"] == pytest.approx(values.std(ddof=1), abs=1e-12)
            assert (row[f"{score}_min"], row[f"{score}_max"]) == (
                pytest.approx(values.min()),
                pytest.approx(values.max()),
            )


def test_references_included_or_not(dataset):
    with_refs = score_dashboard("Toy", include_references=True)
    kinds = {(r["kind"], r["system"]) for r in with_refs["per_system"]}
    assert kinds == {
        ("peer", "1"),
        ("peer", "2"),
        ("peer", "3"),
        ("reference", "A"),
        ("reference", "B"),
        ("reference", "C"),
    }
    refs = {r["system"]: r for r in with_refs["per_system"] if r["kind"] == "reference"}
    # Reference A against the pyramid of B and C (n = 2): weights SCU1 2, SCU2 1, SCU4 1 (SCU 3 vanishes)
    # -> Xa = round(4/2) = 2, MaxWeight 3; A expresses SCU 1 and 2 -> D = 3 -> 1.0 in both topics.
    # C: SCU1 2 (A, B), SCU2 2, SCU3 1 -> Xa = round(5/2) = 3, MaxWeight 5; C expresses SCU 1 -> 2/5.
    assert refs["A"]["modified"] == pytest.approx(1.0) and refs["A"]["modified_sd"] == pytest.approx(0.0)
    assert refs["C"]["modified"] == pytest.approx(0.4) and refs["C"]["topics"] == 2
    assert refs["A"]["modified_jk"] == refs["A"]["modified"]


def test_tier_histograms(dataset):
    hists = tier_histograms("Toy")
    assert [(h["topic"], h["references"], h["scus"]) for h in hists] == [("T1", 3, 4), ("T2", 3, 4)]
    assert hists[0]["tiers"] == [{"weight": 1, "scus": 2}, {"weight": 2, "scus": 1}, {"weight": 3, "scus": 1}]
    assert tier_histograms("Toy", "sacrerouge")[0]["convention"] == "sacrerouge"


def _table(board):
    return {(r["metric"], r["summarizers"], r["level"]): r for r in board["rows"]}


def test_metaeval_peers_only_against_scipy(dataset):
    board = metaeval_table("Toy")
    assert board["keys"] == list(METAEVAL_KEYS) and json.loads(json.dumps(board)) == board
    table = _table(board)
    assert sorted(table) == sorted(
        (m, s, lvl)
        for m in ("content", "rouge")
        for s in ("peers", "peers+references")
        for lvl in ("summary", "system")
    )
    summary, system = table[("content", "peers", "summary")], table[("content", "peers", "system")]
    for method, func in SCIPY.items():
        per_topic = [
            func([toy.MODIFIED[(t, p)] for p in "123"], [CONTENT[(t, p)] for p in "123"]).statistic
            for t in ("T1", "T2")
        ]
        assert summary[method] == pytest.approx(np.mean(per_topic), abs=1e-12)
        xm = [np.mean([toy.MODIFIED[(t, p)] for t in ("T1", "T2")]) for p in "123"]
        ym = [np.mean([CONTENT[(t, p)] for t in ("T1", "T2")]) for p in "123"]
        expected = func(xm, ym)
        assert system[method] == pytest.approx(expected.statistic, abs=1e-12)
        assert system[f"{method}_p"] == pytest.approx(expected.pvalue, abs=1e-12)
    assert (summary["n"], summary["summaries"], summary["topics_skipped"]) == (2, 6, 0)
    assert (system["n"], system["summaries"], system["without_judgment"], system["without_score"]) == (3, 6, 0, 0)
    # rouge was judged in T1 only: the summary level rests on 1 topic, the system level on T1's values.
    rouge = table[("rouge", "peers", "summary")]
    assert rouge["n"] == 1 and rouge["without_judgment"] == 3
    assert rouge["pearson"] == pytest.approx(stats.pearsonr([0.7, 0.4, 1.0], [0.3, 0.1, 0.2]).statistic)


def test_metaeval_with_references_against_scipy(dataset):
    rows = score_rows(topics_of("Toy"), include_references=True)
    modified = defaultdict(list)
    for r in rows:
        modified[(r["topic"], r["summary"])].append(r["modified"])
    x = {key: np.mean(v) for key, v in modified.items()}
    table = _table(metaeval_table("Toy"))
    summary, system = (
        table[("content", "peers+references", "summary")],
        table[("content", "peers+references", "system")],
    )
    summarizers = ["1", "2", "3", "A", "B", "C"]
    for method, func in SCIPY.items():
        per_topic = [
            func([x[(t, s)] for s in summarizers], [CONTENT[(t, s)] for s in summarizers]).statistic
            for t in ("T1", "T2")
        ]
        assert summary[method] == pytest.approx(np.mean(per_topic), abs=1e-12)
        xm = [np.mean([x[(t, s)] for t in ("T1", "T2")]) for s in summarizers]
        ym = [np.mean([CONTENT[(t, s)] for t in ("T1", "T2")]) for s in summarizers]
        assert system[method] == pytest.approx(func(xm, ym).statistic, abs=1e-12)
    assert system["n"] == 6 and summary["summaries"] == 12


def test_metaeval_jackknife_and_bad_score(dataset):
    board = metaeval_table("Toy", score="modified_jk")
    assert board["score"] == "modified_jk" and board["rows"][0]["score"] == "modified_jk"
    with pytest.raises(ValueError, match="score must be one of"):
        metaeval_table("Toy", score="recall")

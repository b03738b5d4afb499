"""Real DUC 2006 data: the dashboards' figures against independent computations from NIST's own
score table (``2006_modified_scores.txt`` holds both the modified score and content responsiveness)
and from the pyramid files. Skips with the reason when ../shared/data is absent."""

import itertools
from collections import Counter, defaultdict
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats

from annotation import formats
from annotation.dashboards.figures import metaeval_table, score_dashboard, tier_histograms
from annotation.dashboards.judgments import import_duc_table
from annotation.dashboards.models import Judgment

from tests.conftest import recomputed_as_in_a_test, shared_data
from tests.dashboards import independent

pytestmark = [pytest.mark.django_db, pytest.mark.realdata]
SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


@pytest.fixture(scope="module")
def duc2006(django_db_setup, django_db_blocker):
    """DUC 2006 imported once for the module, with its content responsiveness (rolled back at the end)."""
    path = shared_data("duc2006")
    with django_db_blocker.unblock():
        from django.db import transaction

        with transaction.atomic():
            with recomputed_as_in_a_test():
                call_command("import_ducview", str(path), stdout=StringIO())
                result = import_duc_table("duc2006", path / "scoring" / "2006_modified_scores.txt")
            yield path, result
            transaction.set_rollback(True)


def nist_table(path):
    """(topic, peer) -> (modified averaged over the annotators' rows, content or None), from the file."""
    modified, content = defaultdict(list), {}
    for line in path.read_text().splitlines():
        cells = line.split("\t")
        if len(cells) < 13:
            continue
        key = (cells[0], str(int(cells[1])))
        modified[key].append(float(cells[2]))
        value = float(cells[12]) if cells[12].strip() else None
        assert content.setdefault(key, value) == value  # D0631: both annotators' rows give the same content
    return {key: (np.mean(values), content[key]) for key, values in modified.items()}


def system_means(table, with_content_only):
    per_system = defaultdict(list)
    for (_, peer), (modified, content) in table.items():
        if content is not None or not with_content_only:
            per_system[peer].append((modified, content))
    systems = sorted(per_system, key=int)
    return (
        systems,
        {s: np.mean([m for m, _ in per_system[s]]) for s in systems},
        {s: np.mean([c for _, c in per_system[s]]) if with_content_only else None for s in systems},
    )


def test_content_import(duc2006):
    _, result = duc2006
    # 462 rows: 440 peers + 22 second-annotator rows of D0631 (same content: accepted once);
    # six D0647 peers (written 01, 02, 03, 05, 06, 08) have no content in the table.
    assert (result.created, result.duplicates, result.empty, result.left_rows) == (434, 22, 6, 0)  # every row placed
    assert Judgment.objects.filter(metric="content_responsiveness").count() == 434
    assert not Judgment.objects.filter(topic__external_id="D0647", summary__in=["1", "2", "3", "5", "6", "8"]).exists()


def test_system_scores_equal_the_table(duc2006):
    path, _ = duc2006
    table = nist_table(path / "scoring" / "2006_modified_scores.txt")
    systems, modified, _ = system_means(table, with_content_only=False)
    board = score_dashboard("duc2006", include_references=False)
    rows = {r["system"]: r for r in board["per_system"]}
    assert sorted(rows, key=int) == systems and len(systems) == 22
    for s in systems:
        assert rows[s]["topics"] == rows[s]["modified_n"] == 20
        assert rows[s]["modified"] == pytest.approx(modified[s], abs=5e-5)  # the table prints 4 decimals


def test_system_level_correlation_with_content_equals_the_table(duc2006):
    path, _ = duc2006
    table = nist_table(path / "scoring" / "2006_modified_scores.txt")
    systems, modified, content = system_means(table, with_content_only=True)
    board = metaeval_table("duc2006")
    rows = {(r["summarizers"], r["level"]): r for r in board["rows"] if r["metric"] == "content_responsiveness"}
    system = rows[("peers", "system")]
    assert system["n"] == 22 and system["summaries"] == 434 and system["without_judgment"] == 6
    figures = {}
    for method, func in SCIPY.items():
        expected = func([modified[s] for s in systems], [content[s] for s in systems]).statistic
        figures[method] = (system[method], expected)
        assert system[method] == pytest.approx(expected, abs=1e-4)  # table rounded to 4 decimals
    # Summary level, independently: per topic over its peers, then the mean over topics.
    by_topic = defaultdict(list)
    for (topic, _), (m, c) in table.items():
        if c is not None:
            by_topic[topic].append((m, c))
    summary = rows[("peers", "summary")]
    assert summary["n"] == 20 and summary["topics_skipped"] == 0 and summary["summaries"] == 434
    for method, func in SCIPY.items():
        expected = np.mean([func(*zip(*pairs, strict=True)).statistic for pairs in by_topic.values()])
        figures[f"summary {method}"] = (summary[method], expected)
        assert summary[method] == pytest.approx(expected, abs=1e-4)
    # The table has no content for references: peers + references pairs the same items.
    assert rows[("peers+references", "system")]["pearson"] == system["pearson"]
    print("\nDUC 2006, modified (nist) vs content responsiveness, ours vs table:", figures)


def test_tier_histograms_equal_the_pyramid_files(duc2006):
    path, _ = duc2006
    expected = {}
    for pyr in sorted((path / "allpyramids").glob("*.pyr")):
        parsed, _ = formats.parse_pyramid(pyr.read_bytes())
        expected[formats.parse_nist_filename(pyr.name).topic] = (
            len(parsed.references),
            Counter(len(s.contributors) for s in parsed.scus),
        )
    hists = tier_histograms("duc2006")
    assert len(hists) == 21  # D0614's .pan files carry a second pyramid
    seen = set()
    for h in hists:
        n, weights = expected[h["topic"]]
        if h["references"] == n and {t["weight"]: t["scus"] for t in h["tiers"] if t["scus"]} == dict(weights):
            seen.add(h["topic"])
        assert sum(t["scus"] for t in h["tiers"]) == h["scus"]
    assert seen == set(expected)


def test_statistics_on_duc2006(duc2006):
    """Intervals, tests, stability and power on DUC 2006 against computations from NIST's table."""
    from annotation.corpus.models import Topic
    from annotation.dashboards import statistics
    from annotation.dashboards.figures import _summarizer_of, _summarizers
    from annotation.peers.results import score_rows

    path, _ = duc2006
    table = nist_table(path / "scoring" / "2006_modified_scores.txt")
    per_system = defaultdict(dict)
    for (topic, peer), (modified, _) in table.items():
        per_system[peer][topic] = modified
    topics = Topic.objects.filter(dataset__name="duc2006")
    summarizers = _summarizers(topics)
    stats = statistics.compute(
        "duc2006",
        score_rows(topics),
        lambda r: _summarizer_of(r, summarizers),
        "nist",
        statistics.load_peer_inputs(topics),
    )
    peers = stats["views"]["peers"]
    systems = {s["system"]: s for s in peers["systems"]}
    assert len(systems) == 22
    for s, by_topic in per_system.items():
        assert systems[s]["mean"] == pytest.approx(np.mean(list(by_topic.values())), abs=5e-5)
        assert systems[s]["low"] < systems[s]["mean"] < systems[s]["high"] and systems[s]["topics"] == 20
    # Paired tests: every one of the 2^20 sign patterns of the table's per-topic differences, Holm by hand.
    pairs = {frozenset((p["a"], p["b"])): p for p in peers["pairs"]}
    assert len(pairs) == 231
    exact = independent.pair_tests(per_system)
    for pair, (_, p, p_holm) in exact.items():
        assert pairs[pair]["exact"] and pairs[pair]["p_value"] == pytest.approx(
            p, abs=1e-3
        )  # the table rounds to 4 decimals
        assert pairs[pair]["significant"] == (p_holm < 0.05)
    assert sum(p["significant"] for p in pairs.values()) == 8
    # Every system in some group; groups in order of mean.
    assert {s for g in peers["groups"] for s in g} == set(systems)
    # SCU-level tests: one per pair, over the 20 topics both annotated against the same pyramid.
    assert len(peers["scu_tests"]) == 231 and all(t["topics"] == 20 for t in peers["scu_tests"])
    # Reference stability: 4 references per pyramid, every subset scored (4, 6, 4 of them).
    curve = peers["reference_stability"]
    assert [(p["k"], p["subsets"]) for p in curve] == [(1, 4), (2, 6), (3, 4)]
    assert curve[0]["mean"] < curve[1]["mean"] < curve[2]["mean"] < 1
    assert [p["k"] for p in peers["topic_stability"]] == list(range(1, 20))
    # Power: the spread of per-topic differences of every pair, from the table.
    sds = [
        np.std([per_system[a][t] - per_system[b][t] for t in per_system[a]], ddof=1)
        for a, b in itertools.combinations(sorted(per_system), 2)
    ]
    assert peers["power"]["sd_quartiles"] == pytest.approx(list(np.quantile(sds, [0.25, 0.5, 0.75])), abs=1e-4)
    print("\nDUC 2006 groups:", peers["groups"], "\nreference stability:", curve)

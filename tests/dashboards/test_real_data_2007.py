"""Real DUC 2007 main (23 topics, 4 references, 13 peers each, one annotation per peer): the
Significance, scores and meta-evaluation pages, as a coordinator gets them, against computations
from NIST's score table (modified score and content responsiveness) and from the .pan files
(``independent.py``). DUC 2006 is checked the same way in the browser
(tests/browser/dashboards/test_dashboards.py). Skips with the reason when ../shared/data is absent."""

import html
import itertools
import json
import re
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from scipy import stats

from tests.conftest import recomputed_as_in_a_test, shared_data
from tests.dashboards import independent

pytestmark = [pytest.mark.django_db, pytest.mark.realdata]
TOPICS, SYSTEMS, PAIRS = 23, 13, 78


@pytest.fixture(scope="module")
def duc2007(django_db_setup, django_db_blocker):
    """DUC 2007 main imported once for the module, its dashboard computed, and the pages a
    coordinator sees (rolled back at the end)."""
    path = shared_data("duc2007-main")
    with django_db_blocker.unblock():
        from django.contrib.auth import get_user_model
        from django.db import transaction

        from annotation.corpus.models import Dataset
        from annotation.corpus.roles import COORDINATOR, role_group
        from annotation.dashboards import snapshots
        from annotation.dashboards.judgments import import_duc_table

        with transaction.atomic():
            with recomputed_as_in_a_test():
                call_command("import_ducview", str(path), stdout=StringIO())
                dataset = Dataset.objects.get(name="duc2007-main")
                import_duc_table(dataset, path / "scoring" / "2007_modified_scores.txt")  # content responsiveness
                snapshots.recompute_dataset(dataset.pk)
                user = get_user_model().objects.create_user("coord-2007")
                user.groups.add(role_group(COORDINATOR))
                dataset.coordinators.add(user)
                client = Client()
                client.force_login(user)
                pages = {
                    name: client.get(reverse(f"dashboards:{name}", args=[dataset.pk])).content.decode()
                    for name in ("significance", "scores", "metaeval")
                }
                pages["with references"] = client.get(
                    reverse("dashboards:significance", args=[dataset.pk]) + "?references=1"
                ).content.decode()
            yield path, pages
            transaction.set_rollback(True)


@pytest.fixture(scope="module")
def per_system(duc2007):
    path, _ = duc2007
    scores = independent.nist_modified(path / "scoring" / "2007_modified_scores.txt")
    assert len(scores) == SYSTEMS and all(len(t) == TOPICS for t in scores.values())
    return scores


def seed_of(page: str) -> int:
    return int(re.search(r"<dt>Seed</dt><dd>(\d+)</dd>", page).group(1))


def system_rows(page: str) -> dict[str, tuple[float, float, float]]:
    """system -> (mean, low, high) as the Significance page's systems table shows them."""
    rows = re.findall(
        r'<tr class="peer" data-system="(\w+)">.*?<td class="num">([\d.]+)</td>\s*'
        r'<td class="num" data-interval>([\d.]+) – ([\d.]+)</td>',
        page,
        re.S,
    )
    return {s: (float(mean), float(low), float(high)) for s, mean, low, high in rows}


def chart_rows(page: str, source: str) -> list[dict]:
    return json.loads(re.search(rf'<script id="{source}" type="application/json">(.*?)</script>', page, re.S).group(1))


def test_intervals(duc2007, per_system):
    _, pages = duc2007
    page = pages["significance"]
    shown = system_rows(page)
    assert len(shown) == SYSTEMS
    seed = seed_of(page)
    means = {s: np.mean(list(by_topic.values())) for s, by_topic in per_system.items()}
    assert list(shown) == sorted(means, key=lambda s: -means[s])  # best first
    for system, (mean, low, high) in shown.items():
        values = [per_system[system][t] for t in sorted(per_system[system])]
        expected = independent.percentile_bootstrap(values, seed=seed, resamples=9999, confidence=0.95)
        # The table prints 4 decimals: each mean (and each resampled mean) is off by < 5e-5.
        assert mean == pytest.approx(means[system], abs=1e-4)
        assert (low, high) == pytest.approx(expected, abs=1.5e-4), system
        # The scores page shows the same interval.
        row = re.search(rf'<tr class="peer" data-system="{system}">(.*?)</tr>', pages["scores"], re.S).group(1)
        assert f"{low:.4f} – {high:.4f}" in row


def test_significance_matrix(duc2007, per_system):
    _, pages = duc2007
    page = pages["significance"]
    tests = independent.pair_tests(per_system)
    significant = {pair for pair, (_, _, p_holm) in tests.items() if p_holm < 0.05}
    assert f"{len(significant)} of {PAIRS} pairs differ significantly" in page
    cells = re.findall(r'<td class="(\w+)" data-a="(\w+)" data-b="(\w+)" title="([^"]*)"', page)
    assert len(cells) == SYSTEMS * (SYSTEMS - 1)
    for verdict, a, b, title in cells:
        independent.check_matrix_cell(a, b, verdict, html.unescape(title), tests)
    # Groups: letters on the systems table, from the exact verdicts.
    letters = dict(re.findall(r'<tr class="peer" data-system="(\w+)">.*?<td class="letters">(\w*)</td>', page, re.S))
    shown = [
        [s for s in letters if chr(ord("a") + i) in letters[s]] for i in range(len(set("".join(letters.values()))))
    ]
    assert shown == independent.groups(list(letters), significant)
    # SCU-level p-values go down to ~1e-30: printed as such, never as 0.
    assert "&lt; 0.0001</td>" in page and "0.0000<" not in page and "p = 0.0000" not in page
    print(
        f"\nDUC 2007 main: {len(significant)} of {PAIRS} pairs significant (Holm, exact),",
        sorted(tuple(sorted(p, key=int)) for p in significant),
    )


def test_pairs_sharing_few_topics(duc2007, per_system):
    """Peers + references: a reference wrote for 8-12 of the 23 topics (the pyramid files' names say
    which), too few for any pair with it to pass Holm's first threshold over all pairs."""
    path, pages = duc2007
    topics_of = {s: set(by_topic) for s, by_topic in per_system.items()}
    for pyramid in (path / "allpyramids").glob("*.pyr"):
        topic, references = pyramid.stem.split("-")
        for reference in references:
            topics_of.setdefault(reference, set()).add(topic)
    shared = [len(topics_of[a] & topics_of[b]) for a, b in itertools.combinations(sorted(topics_of), 2)]
    tested = [n for n in shared if n]
    needed = next(n for n in itertools.count(1) if 2 / 2**n < 0.05 / len(tested))
    page = html.unescape(pages["with references"])
    assert (len(shared), len(tested), needed) == (253, 251, 14)
    assert f"corrected for the {len(tested)} pairs tested (Holm)" in page
    assert (
        f"needs {needed} or more shared topics. {sum(n < needed for n in tested)} of the {len(tested)} "
        "pairs tested share fewer." in page
    )
    assert "data-few-topics" not in pages["significance"]  # peers only: every pair shares the 23 topics


def test_stability_curves(duc2007, per_system):
    path, pages = duc2007
    page = pages["significance"]
    seed = seed_of(page)
    topics = chart_rows(page, "chart-stability-topics")
    assert [r["k"] for r in topics] == list(range(1, TOPICS))
    expected = independent.topic_stability(per_system, seed=seed, draws=200)
    assert [r["mean"] for r in topics] == pytest.approx([expected[r["k"]] for r in topics], abs=2e-3)
    # References: every k-subset of the 4 (4, 6, 4), rescored here from the .pan files.
    references = chart_rows(page, "chart-stability-references")
    assert [(r["k"], r["subsets"], r["draws"]) for r in references] == [(1, 4, 200), (2, 6, 200), (3, 4, 200)]
    expected = independent.reference_stability(independent.read_pans(path / "allpans"), 4, seed=seed, draws=200)
    # Equal means summed in another order may differ in the last bit, so a tie here is an order
    # there: a few of the 200 x 78 pairs of a point flip (2 / 78 / 200 = 1.3e-4 each).
    assert [r["mean"] for r in references] == pytest.approx([expected[k] for k in (1, 2, 3)], abs=1e-3)
    for r in topics + references:  # the table under each chart shows the same points
        assert f'<tr data-k="{r["k"]}"><td class="num">{r["k"]}</td><td class="num">{r["mean"]:.3f}</td>' in page
    print(
        "\nDUC 2007 main, tau by references:",
        {r["k"]: round(r["mean"], 3) for r in references},
        "by topics:",
        {r["k"]: round(r["mean"], 3) for r in topics if r["k"] in (1, 5, 11, 22)},
    )


def test_metaeval_intervals(duc2007, per_system):
    """System level: modified against NIST's content responsiveness, each method's value and interval."""
    path, pages = duc2007
    page = pages["metaeval"]
    content = {}
    for line in (path / "scoring" / "2007_modified_scores.txt").read_text().splitlines():
        cells = line.split("\t")
        content.setdefault(str(int(cells[1])), []).append(float(cells[10]))
    means = {s: (np.mean(list(per_system[s].values())), np.mean(content[s])) for s in per_system}
    seed = int(re.search(r"seed (\d+)", page).group(1))
    row = re.search(r'<tr data-summarizers="peers" data-level="system">(.*?)</tr>', page, re.S).group(1)
    for method, func in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        cell = re.search(
            rf'data-method="{method}">([\d.-]+)<span class="ci" data-ci>\[([\d.-]+), ([\d.-]+)\]</span>'
            rf'<span class="sub">p (=|&lt;) ([\d.]+)</span>',
            row,
        )
        value, low, high = (float(x) for x in cell.groups()[:3])
        x, z = zip(*means.values(), strict=True)
        assert value == pytest.approx(func(x, z).statistic, abs=1e-3)
        assert cell[4] == "=" and float(cell[5]) == pytest.approx(func(x, z).pvalue, abs=2e-4)
        expected = independent.system_correlation_interval(means, method, seed=seed, resamples=1000, confidence=0.95)
        assert (low, high) == pytest.approx(expected, abs=1.5e-3), method


def test_topics_needed(duc2007, per_system):
    _, pages = duc2007
    sd = independent.difference_sd_median(per_system)
    rows = re.findall(
        r'<tr data-difference="([\d.]+)"><td class="num">[\d.]+</td><td class="num">(\d+)</td>', pages["scores"]
    )
    assert len(rows) == 8
    for difference, n in rows:
        effect, n = float(difference) / sd, int(n)
        assert independent.paired_t_power(n, effect, 0.05) >= 0.8 > independent.paired_t_power(n - 1, effect, 0.05)

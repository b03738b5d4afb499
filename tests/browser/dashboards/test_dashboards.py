"""The dashboards in Debian's Chromium: real DUC 2006 data (D0631 annotated twice, by 114 and 115),
its statistics against independent computations from NIST's table, and figures that update by
themselves while the page is open. Screenshots go to test-artifacts/."""

import re
from io import StringIO

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.corpus.models import Dataset
from annotation.corpus.roles import COORDINATOR, role_group
from annotation.dashboards import snapshots
from annotation.dashboards.figures import score_dashboard
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import agreement_rows, topics_of
from annotation.pyramids.models import SCU, Pyramid

from tests.conftest import shared_data
from tests.dashboards import independent
from tests.dashboards.helpers import build_toy, fmt

pytestmark = pytest.mark.browser
PASSWORD = "coordinate-it-2026"


def coordinator_of(dataset):
    user = get_user_model().objects.create_user("coord", password=PASSWORD)
    user.groups.add(role_group(COORDINATOR))
    dataset.coordinators.add(user)
    return user


def logged_in_page(chromium, live_server):
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "coord")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    return page, errors


# Each Chart.js chart (a canvas) inside a chart element: its datasets as the chart holds them. The
# `silent` ones carry no points of their own (the systems' min–max whiskers, the stability band's
# edges, the agreement diagonal) and are left out unless asked for.
CHARTS = """(e, everything) => [...e.querySelectorAll('canvas')].map((c) => Chart.getChart(c).data.datasets
  .filter((d) => everything || !d.silent)
  .map((d) => ({x: d.data.map((p) => p.x), y: d.data.map((p) => p.y), radius: d.pointRadius})))"""


def charts(page, selector: str, everything: bool = False) -> list[list[dict]]:
    """Per chart drawn inside the element ``selector``: its datasets' x, y and point radius, once
    drawn (scrolled into view first: a chart far below the fold is drawn as it comes near)."""
    page.locator(selector).scroll_into_view_if_needed()
    page.wait_for_selector(f"{selector}[data-drawn]")
    return page.locator(selector).evaluate(CHARTS, everything)


def plotted(page, kind: str) -> int:
    """How many points (bars, for tiers) Chart.js drew in a chart, once drawn."""
    return sum(len(d["x"]) for chart in charts(page, f"[data-chart={kind}]") for d in chart)


@pytest.mark.realdata
def test_real_data_dashboards(chromium, live_server, transactional_db, artifacts):
    path = shared_data("duc2006")
    call_command("import_ducview", str(path), stdout=StringIO())  # dashboards computed at the end (eager tasks)
    dataset = Dataset.objects.get(name="duc2006")
    coordinator_of(dataset)
    # Imported annotators cannot log in (inactive accounts), so the third annotator is a new account.
    third = get_user_model().objects.create_user("annotator-three").username
    page, errors = logged_in_page(chromium, live_server)
    base = f"{live_server.url}/datasets/{dataset.pk}"

    # Overview: 20 topics, D0631 annotated twice; assign a third annotator for agreement.
    page.goto(f"{live_server.url}/datasets/")
    page.click("text=duc2006")
    # a click waits for the next page to start loading, not for its rows: count() does not wait
    page.wait_for_load_state()
    assert page.locator("table.overview tbody tr").count() == 20
    assert "×2 annotators" in page.locator('tr[data-topic="D0631"]').inner_text()
    page.select_option("#id_topic", value=str(dataset.topics.get(external_id="D0631").pk))
    page.select_option("#id_annotator", label=third)
    page.select_option("#id_task", value="annotate_peers")
    page.click("form[data-assign-form] button[type=submit]")
    page.wait_for_selector(".msg.success")
    assert f"Assigned {third} to annotate peers on D0631." in page.locator(".messages").inner_text()
    assert "0 of 22 peers done" in page.locator('tr[data-topic="D0631"] td[data-task="annotate_peers"]').inner_text()
    page.screenshot(path=str(artifacts / "dashboards-overview.png"), full_page=False)

    # Agreement: the D0631 row with its 22 peers, the pair matrix, a drill-down.
    page.goto(f"{base}/agreement/")
    [row] = agreement_rows(topics_of("duc2006"))
    d0631 = page.locator('tr[data-topic="D0631"]')
    assert d0631.locator("[data-peers]").inner_text() == "22"
    assert fmt(row["alpha_dice_mean"]) in d0631.locator("[data-alpha-mean]").inner_text()
    assert "22 peers, 1386 units" in d0631.locator("[data-alpha-mean]").inner_text()
    assert fmt(row["alpha_dice_pooled"]) in d0631.locator("[data-alpha-pooled]").inner_text()
    pearson = d0631.locator("[data-pearson]").inner_text()
    assert fmt(row["pearson_modified"]) in pearson and "95% CI" in pearson and "n = 22" in pearson
    assert fmt(row["alpha_dice_pooled"]) in page.locator('[data-matrix] td[data-pair="114-115"]').first.inner_text()
    page.screenshot(path=str(artifacts / "dashboards-agreement.png"), full_page=True)
    page.click('tr[data-topic="D0631"] a')
    page.wait_for_load_state()
    assert page.locator("table.per-peer tbody tr").count() == 22
    assert plotted(page, "agreement") == 22
    page.screenshot(path=str(artifacts / "dashboards-agreement-D0631.png"), full_page=True)
    page.locator("table.per-peer tbody tr").first.locator("text=SCU by SCU").click()
    page.wait_for_selector("table.counts")
    assert page.locator("table.counts tr[data-scu]").count() > 0
    assert plotted(page, "agreement") == 22
    [[points]] = charts(page, "[data-chart=agreement]")
    assert len([r for r in points["radius"] if r > min(points["radius"])]) == 1  # this peer, drawn larger
    page.screenshot(path=str(artifacts / "dashboards-agreement-drilldown.png"), full_page=True)

    # Scores: sortable, one mark per system in the chart.
    page.goto(f"{base}/scores/")
    board = score_dashboard("duc2006", include_references=False)
    assert plotted(page, "systems") == len(board["per_system"]) == 22
    page.click('table.per-system th a[data-sort="system"]')
    page.wait_for_url(re.compile(r"sort=system"))
    systems = page.locator("table.per-system tbody tr").evaluate_all("rows => rows.map(r => r.dataset.system)")
    assert systems == sorted(systems, key=int)
    page.click('table.per-system th a[data-sort="modified"]')
    page.wait_for_url(re.compile(r"sort=-modified"))
    first = page.locator("table.per-system tbody tr").first
    best = max(board["per_system"], key=lambda r: r["modified"])
    assert first.get_attribute("data-system") == best["system"] and fmt(best["modified"], 4) in first.inner_text()
    page.screenshot(path=str(artifacts / "dashboards-scores.png"), full_page=False)
    page.goto(f"{base}/scores/?references=1")
    assert plotted(page, "systems") == 22 + 10  # + references A-J
    plotted(page, "tiers")
    tiers = len(charts(page, "[data-chart=tiers]"))
    assert tiers == Pyramid.objects.filter(topic__dataset=dataset).count() == 21

    check_statistics_pages(page, base, path / "scoring" / "2006_modified_scores.txt", artifacts)

    # Meta-evaluation: upload DUC's content responsiveness (table + header file).
    page.goto(f"{base}/metaeval/")
    page.check("input[name=format][value=duc]")
    page.set_input_files("input[name=file]", str(path / "scoring" / "2006_modified_scores.txt"))
    page.set_input_files("input[name=header]", str(path / "scoring" / "2006-header.txt"))
    # Without a broker the upload's request recomputes the whole dashboard (statistics included).
    page.click("form[data-upload] button[type=submit]", timeout=180_000)
    page.wait_for_selector(".msg.success", timeout=180_000)
    assert "434 new" in page.locator(".messages").inner_text()
    group = page.locator('tbody[data-metric="content_responsiveness"]')
    system_row = group.locator('tr[data-summarizers="peers"][data-level="system"]')
    assert system_row.locator("[data-n]").inner_text().startswith("22")
    assert group.locator('tr[data-summarizers="peers"][data-level="summary"] [data-n]').inner_text().startswith("20")
    assert re.match(r"0\.\d{3}", system_row.locator('[data-method="pearson"]').inner_text())
    page.screenshot(path=str(artifacts / "dashboards-metaeval.png"), full_page=True)
    assert not errors
    page.close()


def shown_number(text: str) -> float:
    [number] = re.findall(r"-?\d+\.\d+", text)
    return float(number)


def check_statistics_pages(page, base, table, artifacts):
    """The Significance page and the scores page's intervals and power table (peers, modified,
    NIST convention) against computations from NIST's own table (``dashboards/independent.py``)."""
    per_system = independent.nist_modified(table)
    page.goto(f"{base}/significance/")
    settings = page.locator("[data-settings]").inner_text()
    seed = int(re.search(r"Seed\s+(\d+)", settings).group(1))

    # Means and their intervals, redone from the recipe with the seed the page shows.
    rows = page.locator("[data-stat-systems] tbody tr")
    assert rows.count() == len(per_system) == 22
    intervals = {}
    for i in range(rows.count()):
        row = rows.nth(i)
        system = row.get_attribute("data-system")
        values = [per_system[system][t] for t in sorted(per_system[system])]
        low, high = independent.percentile_bootstrap(values, seed=seed, resamples=9999, confidence=0.95)
        shown_low, shown_high = (float(x) for x in row.locator("[data-interval]").inner_text().split(" – "))
        # The table prints 4 decimals: each mean (and each resampled mean) is off by < 5e-5.
        assert float(row.locator("td").nth(4).inner_text()) == pytest.approx(np.mean(values), abs=1e-4)
        assert (shown_low, shown_high) == pytest.approx((low, high), abs=1.5e-4), system
        intervals[system] = row.locator("[data-interval]").inner_text()

    # The matrix: each cell's verdict and p-values against every sign pattern counted, Holm by hand.
    tests = independent.pair_tests(per_system)
    significant = {pair for pair, (_, _, p_holm) in tests.items() if p_holm < 0.05}
    heading = page.locator("h2", has_text="Pairwise differences").inner_text()
    assert f"{len(significant)} of 231 pairs differ significantly" in heading
    cells = page.locator("[data-sig-matrix] td[data-a]").evaluate_all(
        "cells => cells.map(c => [c.dataset.a, c.dataset.b, c.className, c.title])"
    )
    assert len(cells) == 22 * 21
    for a, b, verdict, title in cells:
        independent.check_matrix_cell(a, b, verdict, title, tests)
    assert sum(v == "better" for _, _, v, _ in cells) == len(significant)
    scu_p = page.locator("[data-scu-tests] tbody td:nth-child(7)").all_inner_texts()
    assert len(scu_p) == 231 and "< 0.0001" in scu_p and "0.0000" not in scu_p  # never printed as 0

    # Stability: the points Chart.js drew are the table's, and the topic curve is the recipe's.
    def drawn(curve):
        [chart] = charts(page, f"[data-chart=stability][data-source=chart-stability-{curve}]", everything=True)
        return [(d["x"], d["y"]) for d in chart]  # the band's high and low edges, the mean

    def table_points(curve):
        block = page.locator(f'[data-curve="{curve}"] table.curve tbody tr')
        return {int(r.get_attribute("data-k")): float(r.locator("td").nth(1).inner_text()) for r in block.all()}

    (k, high), (_, low), (_, mean) = drawn("topics")
    topics = independent.topic_stability(per_system, seed=seed, draws=200)
    assert k == list(range(1, 20)) and mean == pytest.approx([topics[x] for x in k], abs=2e-3)
    assert mean == pytest.approx([table_points("topics")[x] for x in k], abs=5e-4)
    assert all(lo <= m <= hi for lo, m, hi in zip(low, mean, high, strict=True))
    (k, _), _, (_, mean) = drawn("references")
    assert k == [1, 2, 3] and mean == pytest.approx([table_points("references")[x] for x in k], abs=5e-4)
    assert mean[0] < mean[1] < mean[2] < 1
    page.screenshot(path=str(artifacts / "dashboards-significance.png"), full_page=True)

    # Scores page: the same intervals, and the topics needed at the typical pair's spread.
    page.goto(f"{base}/scores/")
    for system, shown in intervals.items():
        assert page.locator(f'table.per-system tr[data-system="{system}"] [data-interval]').inner_text() == shown
    sd = independent.difference_sd_median(per_system)
    for row in page.locator("[data-power] tr[data-difference]").all():
        effect = float(row.get_attribute("data-difference")) / sd
        n = int(row.locator("td").nth(1).inner_text())
        assert independent.paired_t_power(n, effect, 0.05) >= 0.8 > independent.paired_t_power(n - 1, effect, 0.05), (
            row.inner_text()
        )
    page.locator("[data-power]").screenshot(path=str(artifacts / "dashboards-scores-power.png"))


def test_figures_update_while_watching(chromium, live_server, transactional_db, artifacts, monkeypatch):
    dataset = build_toy()
    coordinator_of(dataset)
    snapshots.recompute_dataset(dataset.pk)
    page, errors = logged_in_page(chromium, live_server)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/scores/?topic=T2")
    row = page.locator("table.per-topic tbody tr").nth(2)  # T2, peer 3: SCU 3 only, 1/5
    # Columns: topic, summary, kind, annotator, version (the annotator's or "adjudicated"), modified...
    assert row.locator("td").nth(5).inner_text() == "0.2000"
    assert page.locator("[data-updating]").is_hidden()
    as_of = page.locator("[data-as-of]").inner_text()

    # The worker is busy: the save commits, the figures are stale and the page says so.
    monkeypatch.setattr(snapshots, "schedule", lambda ids: None)
    annotation = PeerAnnotation.objects.get(
        peer__topic__dataset=dataset, peer__topic__external_id="T2", peer__external_id="3"
    )
    add_match(annotation, SCU.objects.get(pyramid=annotation.pyramid, uid=1), [(10, 14)])
    page.wait_for_selector("[data-updating]:not([hidden])", timeout=10_000)
    page.screenshot(path=str(artifacts / "dashboards-updating.png"), full_page=False)
    assert row.locator("td").nth(5).inner_text() == "0.2000"

    # The worker catches up: the new figure appears without a reload, the badge goes.
    monkeypatch.undo()
    page.wait_for_function(
        "() => document.querySelectorAll('table.per-topic tbody tr')[2].children[5].textContent === '0.8000'",
        timeout=10_000,
    )
    page.wait_for_selector("[data-updating][hidden]", state="attached", timeout=10_000)
    assert page.locator("[data-as-of]").inner_text() >= as_of
    # The swapped-in figures are charted again: the chart shows the new means.
    [chart] = charts(page, "[data-chart=systems]")
    means = {x: y for d in chart for x, y in zip(d["x"], d["y"], strict=True)}
    board = {r["system"]: r["modified"] for r in score_dashboard(dataset.name, include_references=False)["per_system"]}
    assert means == pytest.approx(board)
    assert not errors
    page.close()

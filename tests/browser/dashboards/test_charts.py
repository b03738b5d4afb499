"""Charts in Chromium under the strict Content-Security-Policy the app sends (no inline script or
style): Chart.js comes from the app itself (the version package-lock.json pins), draws every chart
from its json_script rows without a single CSP violation or page error, intervals and axes as the
rows say; the significance page shows the stored statistics."""

import json
import re

import pytest
from django.conf import settings

from annotation.dashboards import snapshots
from annotation.dashboards.models import DatasetDashboard
from frontend.vendor import vendor_files

from tests.browser.dashboards.test_dashboards import coordinator_of, logged_in_page, plotted
from tests.dashboards.helpers import build_toy

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def test_chart_js_is_served_by_the_app_at_the_pinned_version(client, db):
    from django.contrib.staticfiles import finders

    pinned = json.loads((settings.BASE_DIR / "package-lock.json").read_text())["packages"]["node_modules/chart.js"][
        "version"
    ]
    assert (
        json.loads((settings.BASE_DIR / "package.json").read_text())["dependencies"]["chart.js"] == pinned
    )  # exact, no range
    bundle = finders.find("vendor/chart.umd.min.js")
    assert bundle == str(vendor_files()["vendor/chart.umd.min.js"])
    assert f"Chart.js v{pinned}\n" in open(bundle, encoding="utf-8").read(200)
    # collectstatic copies what the finders list, under each storage's prefix; the bundle's source map comes along.
    listed = [
        f"{storage.prefix}/{path}" if getattr(storage, "prefix", None) else path
        for finder in finders.get_finders()
        for path, storage in finder.list([])
    ]
    assert {"vendor/chart.umd.min.js", "vendor/chart.umd.min.js.map"} <= set(listed)


# The systems chart as drawn: each dataset's points and error bars, the y axis's range and title.
SYSTEMS = """e => { const chart = Chart.getChart(e.querySelector('canvas'));
  return {datasets: chart.data.datasets.map((d) => ({silent: Boolean(d.silent), x: d.data.map((p) => p.x),
    y: d.data.map((p) => p.y), bars: d.errorBars})),
          min: chart.scales.y.min, max: chart.scales.y.max, title: chart.options.scales.y.title.text,
            labels: chart.scales.x.getLabels()}; }"""


def check_systems_chart(page):
    """The thin whiskers span each system's min–max over topics, the thick bars its interval, every
    one inside the y axis; the points are the rows' means, the axis titled as the page says."""
    rows = json.loads(page.locator("#chart-systems").text_content())
    drawn = page.locator("[data-chart=systems]").evaluate(SYSTEMS)
    [whiskers, *kinds] = drawn["datasets"]
    assert whiskers["silent"] and not any(k["silent"] for k in kinds)
    assert whiskers["x"] == drawn["labels"] == [r["system"] for r in rows]
    assert whiskers["bars"] == [{"low": r["min"], "high": r["max"]} for r in rows]
    by_system = {r["system"]: r for r in rows}
    for kind in kinds:
        for system, mean, bar in zip(kind["x"], kind["y"], kind["bars"], strict=True):
            row = by_system.pop(system)
            assert mean == row["mean"] and bar == {"low": row["low"], "high": row["high"]}
    assert not by_system  # every system drawn once
    assert drawn["min"] <= min(r["min"] for r in rows) and drawn["max"] >= max(r["max"] for r in rows)
    assert drawn["title"] == page.locator("[data-chart=systems]").get_attribute("data-y-title") == "modified_jk"


@pytest.mark.browser
def test_charts_draw_under_a_strict_csp(chromium, live_server, transactional_db, artifacts):
    dataset = build_toy()
    coordinator_of(dataset)
    snapshots.recompute_dataset(dataset.pk)
    page, errors = logged_in_page(chromium, live_server)
    violations = []
    page.on(
        "console",
        lambda m: (
            violations.append(m.text)
            if "Content Security Policy" in m.text or "Content-Security-Policy" in m.text
            else None
        ),
    )

    def with_csp(route):
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "content-security-policy": CSP})

    page.route(re.compile(r".*/datasets/.*"), with_csp)
    base = f"{live_server.url}/datasets/{dataset.pk}"
    page.goto(f"{base}/scores/?references=1")
    assert plotted(page, "systems") == 6
    check_systems_chart(page)
    assert plotted(page, "tiers") == 2 * 3  # two pyramids, weights 1..3 each
    assert page.locator("[data-chart=tiers] canvas").count() == 2
    assert page.locator("[data-chart=tiers] .chart-title").all_inner_texts() == ["T1 · 3 refs", "T2 · 3 refs"]
    page.screenshot(path=str(artifacts / "dashboards-scores-charts.png"), full_page=True)
    page.goto(f"{base}/agreement/T1/")
    assert plotted(page, "agreement") == 3
    page.goto(f"{base}/significance/")
    stats = DatasetDashboard.objects.get(dataset=dataset).data["conventions"]["nist"]["statistics"]["views"]["peers"]
    assert page.locator("[data-stat-systems] tbody tr").count() == len(stats["systems"])
    assert page.locator("[data-sig-matrix] tbody tr").count() == len(stats["systems"])
    assert str(stats["settings"]["seed"] if "settings" in stats else "") in page.locator("[data-settings]").inner_text()
    for chart in page.locator("[data-chart=stability]").all():  # references, topics: drawn as they come near
        chart.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('[data-chart=stability][data-drawn]').length === 2")
    page.screenshot(path=str(artifacts / "dashboards-significance.png"), full_page=True)
    page.click("text=peers + references")
    page.wait_for_url(re.compile(r"references=1"))
    assert page.locator("[data-stat-systems] tbody tr.reference").count() == 3
    assert not violations, violations
    assert not errors
    page.close()


@pytest.mark.browser
def test_a_chart_far_below_the_fold_is_drawn_as_it_comes_near(chromium, live_server, transactional_db):
    """The scores page's tier charts lie under its tables: left undrawn on load (the page is ready
    sooner), drawn once scrolled near, and again after live figures replace them out of sight."""
    dataset = build_toy()
    coordinator_of(dataset)
    snapshots.recompute_dataset(dataset.pk)
    page, errors = logged_in_page(chromium, live_server)
    page.set_viewport_size({"width": 1280, "height": 500})
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/scores/?references=1")
    page.wait_for_selector("[data-chart=systems][data-drawn]")
    tiers = page.locator("[data-chart=tiers]")
    assert tiers.get_attribute("data-deferred") == "" and tiers.locator("canvas").count() == 0
    tiers.scroll_into_view_if_needed()
    page.wait_for_selector("[data-chart=tiers][data-drawn]")
    assert tiers.get_attribute("data-deferred") is None and tiers.locator("canvas").count() == 2
    page.evaluate("() => window.scrollTo(0, 0)")
    page.evaluate("() => document.dispatchEvent(new CustomEvent('figures:replaced'))")  # as live.js after a swap
    assert tiers.get_attribute("data-deferred") == "" and tiers.locator("canvas").count() == 0
    tiers.scroll_into_view_if_needed()
    page.wait_for_selector("[data-chart=tiers][data-drawn]")
    assert tiers.locator("canvas").count() == 2 and plotted(page, "tiers") == 2 * 3
    assert errors == []

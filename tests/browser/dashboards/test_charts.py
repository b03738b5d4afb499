"""Charts in Chromium under the strict Content-Security-Policy the app sends (no inline script or
style): plotly.js comes from the app itself, draws every chart from its json_script rows without a
single CSP violation or page error; the significance page shows the stored statistics."""
import re

import pytest

from annotation.dashboards import snapshots
from annotation.models import DatasetDashboard
from frontend.vendor import PLOTLY_JS

from tests.dashboards.helpers import build_toy
from tests.browser.dashboards.test_dashboards import coordinator_of, logged_in_page, plotted

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def test_plotly_is_served_by_the_app_and_its_css_matches_its_version(client, db):
    js_version = re.search(r"plotly\.js v([\d.]+)", PLOTLY_JS.read_text(encoding="utf-8")[:400]).group(1)
    from django.contrib.staticfiles import finders

    css = finders.find("dashboards/plotly-global.css")
    assert f"plotly.js v{js_version} " in open(css, encoding="utf-8").read(200)
    assert finders.find("vendor/plotly.min.js") == str(PLOTLY_JS)
    # collectstatic copies what the finders list, under each storage's prefix.
    listed = [f"{storage.prefix}/{path}" if getattr(storage, "prefix", None) else path
              for finder in finders.get_finders() for path, storage in finder.list([])]
    assert "vendor/plotly.min.js" in listed


@pytest.mark.browser
def test_charts_draw_under_a_strict_csp(chromium, live_server, transactional_db, artifacts):
    dataset = build_toy()
    coordinator_of(dataset)
    snapshots.recompute_dataset(dataset.pk)
    page, errors = logged_in_page(chromium, live_server)
    violations = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text or "Content-Security-Policy" in m.text else None)

    def with_csp(route):
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "content-security-policy": CSP})

    page.route(re.compile(r".*/datasets/.*"), with_csp)
    base = f"{live_server.url}/datasets/{dataset.pk}"
    page.goto(f"{base}/scores/?references=1")
    assert plotted(page, "systems") == 6
    plotted(page, "tiers")
    assert page.locator(".js-plotly-plot").count() == 2
    page.screenshot(path=str(artifacts / "dashboards-scores-charts.png"), full_page=True)
    page.goto(f"{base}/agreement/T1/")
    assert plotted(page, "agreement") == 3
    page.goto(f"{base}/significance/")
    stats = DatasetDashboard.objects.get(dataset=dataset).data["conventions"]["nist"]["statistics"]["views"]["peers"]
    assert page.locator("[data-stat-systems] tbody tr").count() == len(stats["systems"])
    assert page.locator("[data-sig-matrix] tbody tr").count() == len(stats["systems"])
    assert str(stats["settings"]["seed"] if "settings" in stats else "") in page.locator("[data-settings]").inner_text()
    page.wait_for_function("() => document.querySelectorAll('[data-chart=stability][data-drawn]').length === 2")   # references, topics
    page.screenshot(path=str(artifacts / "dashboards-significance.png"), full_page=True)
    page.click("text=peers + references")
    page.wait_for_url(re.compile(r"references=1"))
    assert page.locator("[data-stat-systems] tbody tr.reference").count() == 3
    assert not violations, violations
    assert not errors
    page.close()

"""In Chromium: the scores page's per-topic table clicked through its pages and sorted (the order
and the filter kept, a new order starting on page 1), and a dataset whose first figures are still
being computed: the page says so and shows them by itself once they are stored. axe-core audits
every page loaded (tests/conftest.py). Screenshots go to test-artifacts/."""

import re

import pytest

from annotation.dashboards import snapshots
from annotation.dashboards.figures import score_dashboard
from annotation.dashboards.models import DatasetDashboard
from frontend.dashboards import views

from tests.browser.dashboards.test_dashboards import coordinator_of, logged_in_page
from tests.dashboards.helpers import build_toy

pytestmark = pytest.mark.browser


def _rows(page) -> list[list[str]]:
    return page.locator("table.per-topic tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.children].map(c => c.textContent.trim()))"
    )


def test_clicking_through_the_per_topic_pages_and_sorting(
    chromium, live_server, transactional_db, artifacts, monkeypatch
):
    dataset = build_toy()
    coordinator_of(dataset)
    snapshots.recompute_dataset(dataset.pk)
    monkeypatch.setattr(views, "TOPIC_PAGE_SIZE", 3)  # the live server runs in this process
    board = score_dashboard(dataset.name, include_references=True)
    total = len(board["per_topic"])
    pages = -(-total // 3)
    assert pages >= 3
    page, errors = logged_in_page(chromium, live_server)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/scores/?references=1")
    pager = page.get_by_role("navigation", name="Per-topic table pages")
    assert pager.locator("[aria-current=page]").text_content() == "Page 1"
    seen = [_rows(page)]
    page.screenshot(path=str(artifacts / "scores-paging-1.png"), full_page=True)
    # Next, then the last page's number: every row once, in the default order (by topic).
    for number in range(2, pages + 1):
        if number == pages:
            pager.get_by_role("link", name=f"Page {number}", exact=True).click()
        else:
            pager.get_by_role("link", name="Next page").click()
        page.wait_for_url(re.compile(rf"tpage={number}"))
        seen.append(_rows(page))
        assert f"of {total}" in pager.locator("[data-range]").inner_text()
    assert [len(r) for r in seen] == [3] * (pages - 1) + [total - 3 * (pages - 1)]
    flat = [r for rows in seen for r in rows]
    assert [r[0] for r in flat] == sorted(r["topic"] for r in board["per_topic"])
    assert sorted((r[0], r[1]) for r in flat) == sorted((r["topic"], r["summary"]) for r in board["per_topic"])
    assert pager.get_by_role("link", name="Next page").count() == 0
    # Sorting by modified (descending first) starts again on page 1, the references kept.
    page.locator("table.per-topic thead a", has_text=re.compile(r"^Modified$")).click()
    page.wait_for_url(re.compile(r"tsort=-modified"))
    assert "tpage" not in page.url and "references=1" in page.url
    assert pager.locator("[aria-current=page]").text_content() == "Page 1"
    best = max(r["modified"] for r in board["per_topic"] if r["modified"] is not None)
    _rows_before = _rows(page)
    assert float(_rows_before[0][5]) == pytest.approx(best, abs=5e-5)
    pager.get_by_role("link", name="Next page").click()
    page.wait_for_url(re.compile(r"tpage=2"))
    assert "tsort=-modified" in page.url
    first_page = [float(r[5]) for r in _rows_before if r[5] != "—"]
    modified = first_page + [float(r[5]) for r in _rows(page) if r[5] != "—"]
    assert modified == sorted(modified, reverse=True) and len(modified) == 6  # pages 1 and 2 continue the order
    page.screenshot(path=str(artifacts / "scores-paging-sorted-2.png"), full_page=True)
    # The topic filter (a form) keeps the order and starts on page 1.
    page.select_option("select[name=topic]", "T2")
    page.locator("#per-topic form button[type=submit]").click()
    page.wait_for_url(re.compile(r"topic=T2"))
    assert "tpage" not in page.url and "tsort=-modified" in page.url
    assert {r[0] for r in _rows(page)} == {"T2"}
    assert not errors
    page.close()


def test_first_figures_computed_while_watching(chromium, live_server, transactional_db, artifacts, monkeypatch):
    dataset = build_toy()
    coordinator_of(dataset)
    DatasetDashboard.objects.filter(dataset=dataset).delete()
    scheduled = []
    monkeypatch.setattr(snapshots, "schedule", lambda ids: scheduled.append(list(ids)))  # the worker is busy
    page, errors = logged_in_page(chromium, live_server)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/scores/")
    assert page.locator("[data-computing-note]").is_visible()
    assert "being computed for the first time" in page.locator("[data-computing-note]").inner_text()
    assert page.locator("[data-updating]").is_visible() and page.locator("table.per-topic").count() == 0
    page.screenshot(path=str(artifacts / "scores-computing.png"), full_page=True)
    assert scheduled and not DatasetDashboard.objects.filter(dataset=dataset).exists()
    # The worker stores the snapshot: the page reloads itself and shows the figures.
    snapshots.recompute_dataset(dataset.pk)
    page.wait_for_selector("table.per-topic tbody tr", timeout=15_000)
    assert page.locator("[data-computing-note]").count() == 0 and page.locator("[data-updating]").is_hidden()
    page.screenshot(path=str(artifacts / "scores-computed.png"), full_page=False)
    assert not errors
    page.close()

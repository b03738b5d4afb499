"""A coordinator turns the pyramid builder's proposals off for a dataset in Chromium (issue 30 §2:
unassisted building for agreement studies), and the builder then shows none. Screenshot in
test-artifacts/setup-building.png."""

import pytest

from annotation.corpus.models import Dataset

from tests.browser.setup.browser import open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_coordinator_builds_a_dataset_unassisted(chromium, live_server, people, artifacts):
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/")
    box = page.get_by_label("Propose contributors and SCUs in the pyramid builder")
    assert box.is_checked()
    box.uncheck()
    page.click("[data-building-form] button[type=submit]")
    page.wait_for_selector(".msg.success")
    assert "built unassisted" in page.text_content(".messages")
    assert not page.get_by_label("Propose contributors and SCUs in the pyramid builder").is_checked()
    assert Dataset.objects.get(pk=people.dataset.pk).assisted_building is False
    page.locator("section.building").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "setup-building.png"), full_page=True)
    assert errors == []

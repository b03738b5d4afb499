"""*Import a pyramid set* in Chromium: a coordinator uploads three annotators' pyramids of the same
texts (two identical) as one set, then opens the construction agreement the report links to.
Screenshots in test-artifacts/setup-pyramid-set*.png."""

import pytest

from annotation.pyramids.models import Pyramid

from tests.browser.setup.browser import open_as
from tests.frontend.setup.test_pyramid_set import PYR, other_annotator

pytestmark = pytest.mark.browser


def test_a_coordinator_uploads_a_set_and_opens_its_construction_agreement(
    chromium, live_server, people, transactional_db, in_process_jobs, artifacts, tmp_path
):
    paths = []
    for name, data in (("alice.pyr", PYR), ("bob.pyr", PYR), ("carol.pyr", other_annotator())):
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/")
    page.get_by_role("link", name="Import a pyramid set").click()
    page.get_by_label("Topic").fill("EVENT")
    page.set_input_files("#id_files", paths)
    page.get_by_role("button", name="Import the set").click()
    page.wait_for_selector("[data-agreement-link]")
    assert page.inner_text("[data-count=pyramids]") == "3" and page.inner_text("[data-count=rejected]") == "0"
    assert sorted(Pyramid.objects.filter(topic__external_id="EVENT").values_list("source", flat=True)) == [
        "alice.pyr",
        "bob.pyr",
        "carol.pyr",
    ]
    page.screenshot(path=str(artifacts / "setup-pyramid-set.png"), full_page=True)
    page.locator("[data-agreement-link] a").click()
    page.wait_for_url(f"{live_server.url}/datasets/{people.dataset.pk}/pyramid-agreement/EVENT/")
    text = page.inner_text("main")
    assert "alice.pyr" in text and "bob.pyr" in text and "carol.pyr" in text, text[:2000]
    page.screenshot(path=str(artifacts / "setup-pyramid-set-agreement.png"), full_page=True)
    assert errors == []

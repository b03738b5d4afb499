"""The import report in Chromium, clicked like a person: the summary comes first, the per-file list
opens from its toggle, the headings say what their entries are (offsets kept vs relocated), a
re-import's per-file statuses agree with its summary; the annotator marks evidence whose label was
not found. Screenshots in test-artifacts/setup-import-report*.png and annotator-review.png."""

import zipfile

import pytest

from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid

from tests.browser.setup.browser import open_as
from tests.formats.helpers import fixture_bytes

pytestmark = pytest.mark.browser


def _archive(tmp_path):
    path = tmp_path / "stale.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("event/D0699.pyr", fixture_bytes("event_repairs.pyr").replace(b"T0001.M.100", b"D0699.M.100"))
        z.writestr("event/101.D0699.M.100.A.3.pan", fixture_bytes("stale_label_v15.pan"))
        z.writestr("event/D0698.pyr", fixture_bytes("hostile_xxe.pyr"))
    return path


def _upload(page, path):
    page.set_input_files("#id_files", str(path))
    page.get_by_role("button", name="Import").click()
    page.wait_for_selector("[data-import-report]")


def test_report_leads_with_the_summary_and_opens_the_file_list_on_a_click(
    chromium, live_server, people, transactional_db, artifacts, tmp_path
):
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/import/")
    archive = _archive(tmp_path)
    _upload(page, archive)

    report = page.locator("[data-import-report]")
    first = report.locator("h2 + *")
    assert first.get_attribute("class") == "tiles", "the summary comes right after the heading"
    assert [page.inner_text(f"[data-count={k}]") for k in ("files", "annotations", "rejected")] == ["3", "1", "1"]
    rows = page.locator("tr[data-outcome]")
    assert not rows.first.is_visible(), "the per-file list is closed until asked for"
    page.get_by_text("Every file (3)").click()
    assert rows.first.is_visible() and rows.count() == 3
    kept = page.locator("[data-kept] summary")
    assert (
        kept.inner_text() == "3 parts with offsets kept, label not found — review"
    )  # SCUs 25 and 40 of the .pyr, SCU 4 of the .pan
    kept.click()
    assert "The closing parade was called off" in page.inner_text("[data-kept] ul")
    assert "relocated near their stored offsets" in page.inner_text("[data-repairs] summary")
    assert page.locator("[data-review]").is_visible()
    page.screenshot(path=str(artifacts / "setup-import-report.png"), full_page=True)

    # Again: nothing new, and every file says so as the summary does.
    _upload(page, archive)
    assert page.inner_text("[data-count=pyramids]") == "0" and page.inner_text("[data-count=annotations]") == "0"
    assert page.locator("[data-kept]").count() == 0  # nothing was written again, nothing is said again
    page.get_by_text("Every file (3)").click()
    statuses = {
        row.get_attribute("data-outcome"): row.locator("td").nth(2).inner_text()
        for row in page.locator("tr[data-outcome]").all()
    }
    assert statuses == {
        "event/D0699.pyr": "already present",
        "event/101.D0699.M.100.A.3.pan": "already present",
        "event/D0698.pyr": "rejected",
    }
    page.screenshot(path=str(artifacts / "setup-import-report-again.png"), full_page=True)

    # The annotator shows the kept evidence, outlined, and says why.
    annotation = PeerAnnotation.objects.get(pyramid__topic__dataset=people.dataset)
    page.goto(f"{live_server.url}/annotations/{annotation.pk}/")
    page.wait_for_selector("#annotator.ready")
    summary = page.locator(".review-summary")
    assert summary.is_visible() and "offsets kept, label not found — review" in summary.inner_text()
    outlined = page.locator(".peer-text .seg.to-review")
    assert outlined.count() >= 1 and "The parade was cancelled" in " ".join(outlined.all_inner_texts())
    assert page.locator(".scu p.review").count() == 1
    outlined.first.click()
    assert "offsets kept, label not found — review" in page.inner_text(".last-action")
    page.screenshot(path=str(artifacts / "annotator-review.png"), full_page=True)

    # The builder marks the .pyr's contributors kept at their offsets (SCUs 25 and 40).
    pyramid = Pyramid.objects.get(topic__dataset=people.dataset, source="event/D0699.pyr")
    page.goto(f"{live_server.url}/pyramids/{pyramid.pk}/build/")
    page.wait_for_selector(".ready")
    badges = page.locator(".contrib .review")
    assert badges.count() == 2 and set(badges.all_inner_texts()) == {"review"}
    assert {badges.nth(i).get_attribute("title") for i in range(2)} == {"offsets kept, label not found — review"}
    badges.first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "builder-review.png"))
    assert errors == []


def test_a_dropped_contributor_is_said_once_whatever_number_of_files_carry_it(
    chromium, live_server, people, transactional_db, artifacts, tmp_path
):
    # SCU 7's only part lies outside the text and its label is nowhere: the contributor is left out.
    # The .pyr and both .pan files carry that pyramid; the report says so in one entry.
    moved = (b'label="Nobody was hurt" start="175" end="190"', b'label="Nobody at all" start="900175" end="900190"')
    path = tmp_path / "dropped.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("D0999.pyr", fixture_bytes("event.pyr").replace(*moved))
        for peer in ("1", "2"):
            pan = fixture_bytes("event.pan")
            assert moved[0] in pan
            z.writestr(f"1.D0999.M.100.A.{peer}.pan", pan.replace(*moved))
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/import/")
    _upload(page, path)
    assert [page.inner_text(f"[data-count={k}]") for k in ("files", "annotations", "rejected")] == ["3", "2", "0"]
    left_out = page.locator("[data-unplaced] summary")
    assert left_out.inner_text().startswith("1 part or contributor left out")
    left_out.click()
    [entry] = page.locator("[data-unplaced] li").all_inner_texts()
    assert "SCU 7" in entry and "contributor left out" in entry
    page.screenshot(path=str(artifacts / "setup-import-report-dropped.png"), full_page=True)
    assert errors == []

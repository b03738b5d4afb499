"""DUCView files in and out through the pages, in Chromium: a zip uploaded with progress and the
import report shown (imported, rejected with the reason, skipped), then every export button
downloads what the API serves. Screenshots in test-artifacts/setup-import*.png, setup-exports.png."""

import json
import zipfile

import pytest

from annotation.formats import parse_peer_annotation, parse_pyramid
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid

from tests.browser.setup.browser import open_as
from tests.formats.helpers import fixture_bytes

pytestmark = pytest.mark.browser


def _archive(tmp_path):
    path = tmp_path / "event-study.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("event/D0699.pyr", fixture_bytes("event.pyr"))
        z.writestr("event/101.D0699.M.250.A.3.pan", fixture_bytes("event.pan"))
        z.writestr("event/D0698.pyr", fixture_bytes("hostile_xxe.pyr"))
        z.writestr("event/notes.txt", "not a DUCView file")
    return path


def test_import_a_zip_with_progress_and_export_everything(
    chromium, live_server, people, transactional_db, artifacts, tmp_path
):
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/")
    page.get_by_role("link", name="Import DUCView").click()
    page.wait_for_selector("[data-upload-text]", state="attached")  # the import page, not the one the click left
    page.evaluate("""() => { window.progressSeen = [];
        new MutationObserver(() => window.progressSeen.push(document.querySelector('[data-upload-text]').textContent))
          .observe(document.querySelector('[data-upload-text]'), {childList: true, characterData: true,
            subtree: true}); }""")
    page.set_input_files("#id_files", str(_archive(tmp_path)))
    url = page.url
    page.get_by_role("button", name="Import").click()
    page.wait_for_selector("[data-import-report]")
    assert page.url == url, "the report comes in place, the page is not reloaded"
    seen = page.evaluate("window.progressSeen")
    assert any(s.startswith("Uploading…") for s in seen) and any("Importing" in s for s in seen), seen

    assert page.inner_text("[data-count=files]") == "3"
    assert page.inner_text("[data-count=pyramids]") == "1"
    assert page.inner_text("[data-count=annotations]") == "1"
    assert page.inner_text("[data-count=rejected]") == "1"
    rejected = page.inner_text("[data-rejected]")
    assert "D0698.pyr" in rejected
    assert "1 archive member skipped" in page.inner_text("[data-ignored] summary")
    page.get_by_text("Every file (3)").click()  # the per-file list opens on request
    assert "rejected" in page.inner_text("tr[data-outcome='event/D0698.pyr']")
    assert "imported" in page.inner_text("tr[data-outcome='event/101.D0699.M.250.A.3.pan']")
    pyramid = Pyramid.objects.get(topic__dataset=people.dataset, topic__external_id="D0699")
    annotation = PeerAnnotation.objects.get(pyramid=pyramid)
    assert pyramid.scus.count() == int(page.inner_text("[data-count=scus]"))
    page.screenshot(path=str(artifacts / "setup-import.png"), full_page=True)

    # A refused upload says why and imports nothing.
    bad = tmp_path / "broken.zip"
    bad.write_bytes(b"PK not really a zip")
    page.set_input_files("#id_files", str(bad))
    page.get_by_role("button", name="Import").click()
    page.wait_for_selector("[data-refused]")
    assert "broken.zip: not a valid zip archive" in page.inner_text("[data-refused-reason]")
    assert "Nothing was imported." in page.inner_text("[data-refused-reason]")
    assert Pyramid.objects.filter(topic__dataset=people.dataset).count() == 1

    # Exports: each button downloads what the API exports.
    page.get_by_role("link", name="Export").click()
    page.screenshot(path=str(artifacts / "setup-exports.png"), full_page=True)
    row = page.locator(f"tr[data-pyramid='{pyramid.pk}']")
    with page.expect_download() as download:
        row.get_by_role("link", name="DUCView .pyr").click()
    pyr, _ = parse_pyramid(download.value.path().read_bytes())
    assert len(pyr.scus) == pyramid.scus.count()
    row.locator("summary").click()
    with page.expect_download() as download:
        row.get_by_role("link", name=".pan").click()
    pan, _ = parse_peer_annotation(download.value.path().read_bytes())
    assert pan.text == annotation.peer.text
    with page.expect_download() as download:
        row.get_by_role("link", name="SacreROUGE").first.click()
    assert json.loads(download.value.path().read_text().splitlines()[0])["instance_id"]
    with page.expect_download() as download:
        page.click("[data-export=archive-nist]")
    names = zipfile.ZipFile(download.value.path()).namelist()
    assert "manifest.json" in names and "scores.csv" in names and any(n.endswith(".pyr") for n in names)
    with page.expect_download() as download:
        page.click("[data-export=scores-csv-sacrerouge]")
    header = download.value.path().read_text().splitlines()[0]
    assert header.startswith("dataset,topic,summary,kind,annotator")
    with page.expect_download() as download:
        page.click("[data-export=agreement-json-nist]")
    assert json.loads(download.value.path().read_text()) == []  # one annotator: no agreement rows
    assert errors == []

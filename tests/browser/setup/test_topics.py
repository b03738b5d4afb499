"""A coordinator starts a dataset and adds topics in Chromium: pasted texts with a preview, a
preview that goes stale when the input changes, a zip of NIST-named files. Screenshots in
test-artifacts/setup-*.png."""

import zipfile

import pytest

from annotation.corpus.models import Dataset, Topic

from tests.browser.setup.browser import open_as

pytestmark = pytest.mark.browser

REFERENCES = """---------------
D0601.M.250.A.A
---------------
The dam burst at night and the valley flooded.

---------------
D0601.M.250.A.B
---------------
Engineers blamed the old concrete of the dam.
"""
PEERS = """---------------
D0601.M.250.A.1
---------------
The old dam failed at night.
---------------
D0601.M.250.A.2
---------------
Nobody was hurt <really>.
"""


def test_create_a_dataset_and_paste_a_topic_with_a_preview(chromium, live_server, people, transactional_db, artifacts):
    page, errors = open_as(chromium, live_server, "coord")
    page.click("[data-new-dataset]")
    page.click("#id_name")
    page.keyboard.type("Spring study")
    page.click("#id_description")
    page.keyboard.type("Floods, two references per topic.")
    page.get_by_role("button", name="Create dataset").click()
    page.wait_for_selector(".msg.success")
    dataset = Dataset.objects.get(name="Spring study")
    assert list(dataset.coordinators.all()) == [people.coord]
    assert "you coordinate it" in page.inner_text(".messages")
    assert "No topics yet." in page.inner_text(".empty-state")
    page.screenshot(path=str(artifacts / "setup-new-dataset.png"))

    page.get_by_role("link", name="Add a topic", exact=True).click()
    page.click("#id_topic")
    page.keyboard.type("D0601")
    page.click("#id_title")
    page.keyboard.type("A dam bursts")
    page.fill("#id_references_text", REFERENCES)
    page.fill("#id_peers_text", PEERS)
    assert page.is_disabled("[data-save-button]"), "nothing to save before a preview"
    page.click("[data-preview-button]")
    page.wait_for_selector("[data-plan][data-ok='1']")
    assert page.inner_text("[data-totals]") == "1 topic (1 new), 2 references, 2 peers"
    rows = page.locator("[data-preview-topic='D0601'] tbody tr")
    assert rows.count() == 4
    assert "Nobody was hurt <really>." in page.inner_text("tr[data-summary='peer:2']")
    assert page.is_enabled("[data-save-button]")
    page.screenshot(path=str(artifacts / "setup-topic-preview.png"), full_page=True)
    assert not Topic.objects.filter(dataset=dataset).exists(), "a preview writes nothing"

    # Changing the input makes the preview stale: Save waits for a new preview.
    page.click("#id_peers_text")
    page.keyboard.press("Control+End")
    page.keyboard.type("\n---------------\nD0601.M.250.A.3\n---------------\nA third peer.")
    assert page.is_disabled("[data-save-button]")
    assert "preview again" in page.inner_text("[data-preview-state]")
    page.click("[data-preview-button]")
    page.wait_for_selector("[data-totals]:has-text('3 peers')")
    page.click("[data-save-button]")
    page.wait_for_selector(".msg.success")
    assert page.inner_text(".messages") == "Added 1 topic, 2 reference summaries, 3 peer summaries."
    assert page.inner_text("tr[data-topic='D0601'] [data-references]") == "2"
    assert page.inner_text("tr[data-topic='D0601'] [data-peers]") == "3"
    topic = Topic.objects.get(dataset=dataset, external_id="D0601")
    assert topic.title == "A dam bursts"
    assert topic.peersummarys.get(external_id="2").text == "Nobody was hurt <really>."
    page.screenshot(path=str(artifacts / "setup-topics.png"))
    assert errors == []


def test_a_bad_pattern_and_a_zip_of_files(chromium, live_server, people, transactional_db, artifacts, tmp_path):
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/topics/add/")
    page.click("#id_topic")
    page.keyboard.type("D0602")
    page.fill("#id_peers_text", "== 1 ==\nOne.\n")
    page.click("details.advanced summary")
    page.fill("#id_header_pattern", "(.*a){20}x(")
    page.click("[data-preview-button]")
    page.wait_for_selector("[data-plan][data-ok='0']")
    assert "the header pattern is not a valid regular expression" in page.inner_text("[data-problems]")
    assert page.is_disabled("[data-save-button]")

    # The pattern fixed, the references uploaded as a file (Windows line ends): saved.
    page.fill("#id_header_pattern", r"^== \S+ ==$")
    references = tmp_path / "references.txt"
    references.write_bytes(b"== A ==\r\nFirst reference.\r\n== B ==\r\nSecond reference.\r\n")
    page.set_input_files("#id_references_file", str(references))
    page.click("[data-preview-button]")
    page.wait_for_selector("[data-plan][data-ok='1']")
    assert page.inner_text("[data-totals]") == "1 topic (1 new), 2 references, 1 peer"
    page.click("[data-save-button]")
    page.wait_for_selector(".msg.success")
    assert page.inner_text(".messages") == "Added 1 topic, 2 reference summaries, 1 peer summary."
    assert dict(Topic.objects.get(external_id="D0602").referencesummarys.values_list("external_id", "text")) == {
        "A": "First reference.",
        "B": "Second reference.",
    }

    archive = tmp_path / "duc-texts.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("D0610.M.250.A.A", "Reference A of ten.")
        z.writestr("D0610.M.250.A.B", "Reference B of ten.")
        z.writestr("D0610.M.250.A.7", "Peer seven of ten.")
        z.writestr("D0611.M.250.A.A", "Reference A of eleven.")
        z.writestr("notes.txt", "not a summary")
    page.get_by_role("link", name="Add topics from a zip", exact=True).first.click()
    page.set_input_files("#id_archive", str(archive))
    page.click("[data-preview-button]")
    page.wait_for_selector("[data-plan][data-ok='1']")
    assert page.inner_text("[data-totals]") == "2 topics (2 new), 3 references, 1 peer"
    assert "1 file skipped" in page.inner_text("[data-ignored]")
    page.screenshot(path=str(artifacts / "setup-zip-preview.png"), full_page=True)
    page.click("[data-save-button]")
    page.wait_for_selector(".msg.success")
    assert page.inner_text(".messages") == "Added 2 topics, 3 reference summaries, 1 peer summary."
    assert sorted(Topic.objects.filter(dataset=people.dataset).values_list("external_id", flat=True)) == [
        "D0601",
        "D0602",
        "D0610",
        "D0611",
    ]
    assert errors == []

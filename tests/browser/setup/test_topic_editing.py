"""A coordinator opens a topic from the set-up page, sees which texts are fixed, renames the topic
and deletes another after the confirmation, in Chromium. Screenshots in
test-artifacts/setup-topic*.png."""

import pytest

from annotation.corpus.models import Topic

from tests.browser.setup.browser import open_as

pytestmark = pytest.mark.browser


def test_open_rename_and_delete_topics(chromium, live_server, people, topic, transactional_db, artifacts):
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/")
    page.click("tr[data-topic='D0601'] [data-topic-link]")
    page.wait_for_selector("[data-topic-heading]")
    assert page.inner_text("[data-topic-heading]") == "Topic D0601"
    assert page.locator("[data-summaries='reference'] tbody tr").count() == 4
    assert page.locator("[data-summaries='peer'] tbody tr").count() == 3
    assert "fixed" in page.inner_text("tr[data-summary='peer:1']") and "editable" in page.inner_text(
        "tr[data-summary='peer:2']"
    )
    page.screenshot(path=str(artifacts / "setup-topic.png"), full_page=True)

    # A fixed text says why and is read-only.
    page.click("tr[data-summary='reference:A'] [data-open-summary]")
    page.wait_for_selector("[data-locks]")
    assert "1 pyramid contributor points into this text by character offsets." in page.inner_text("[data-locks]")
    assert page.locator("textarea").count() == 0
    page.screenshot(path=str(artifacts / "setup-topic-fixed-text.png"), full_page=True)
    page.get_by_role("link", name="Back to the topic").click()

    # A text nothing rests on is corrected in place.
    page.click("tr[data-summary='peer:2'] [data-open-summary]")
    page.wait_for_selector("[data-text-form]")
    page.fill("#id_text", "Peer 2: the old dam failed at night.")
    page.screenshot(path=str(artifacts / "setup-topic-edit-text.png"), full_page=True)
    page.get_by_role("button", name="Save the text").click()
    page.wait_for_selector(".msg.success")
    assert page.inner_text(".messages") == "Peer 2: text saved."
    assert "the old dam failed" in page.inner_text("tr[data-summary='peer:2']")

    # Rename it.
    page.fill("#id_topic-external_id", "D0601-dam")
    page.fill("#id_topic-title", "A dam bursts")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_selector(".msg.success")
    assert page.inner_text(".messages") == "Topic D0601 renamed D0601-dam."
    assert page.inner_text("[data-topic-heading]").split() == ["Topic", "D0601-dam", "A", "dam", "bursts"]

    # Delete the other topic: the button waits for its id.
    page.get_by_role("link", name="set-up").click()
    page.click("tr[data-topic='D0602'] [data-topic-link]")
    page.click("[data-delete-topic]")
    page.wait_for_selector("[data-delete-confirmation]")
    assert page.inner_text("[data-count='references'] .value") == "1"
    assert page.inner_text("[data-count='peers'] .value") == "0"
    assert page.is_disabled("[data-delete-button]")
    page.click("#id_confirm")
    page.keyboard.type("D060")
    assert page.is_disabled("[data-delete-button]")
    page.keyboard.type("2")
    assert page.is_enabled("[data-delete-button]")
    page.screenshot(path=str(artifacts / "setup-topic-delete.png"), full_page=True)
    page.click("[data-delete-button]")
    page.wait_for_selector(".msg.success")
    assert page.inner_text(".messages") == "Topic D0602 deleted, with 1 reference summary."
    assert page.locator("tr[data-topic='D0602']").count() == 0
    assert page.locator("tr[data-topic='D0601-dam']").count() == 1
    assert sorted(Topic.objects.filter(dataset=people.dataset).values_list("external_id", flat=True)) == ["D0601-dam"]
    assert errors == []

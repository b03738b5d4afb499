"""After a topic's pyramid is adjudicated, in Chromium: the coordinator's overview, the annotator's
home and the annotator page count progress as the scores count and say which peers to annotate
again; *Carry over matches* copies the matches of SCUs the adjudicated pyramid kept, and the peer,
once done, counts on every page."""

import re

import pytest

from annotation.peers.models import PeerAnnotation

from tests.adjudication.pyramid_world import annotated_then_adjudicated
from tests.browser.editors.browser import wait_saved
from tests.browser.setup.browser import open_as
from tests.corpus.world import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_peers_to_annotate_again_and_carrying_matches_over(chromium, live_server, artifacts):
    world = annotated_then_adjudicated(password=PASSWORD)
    dataset, adjudicated = world["dataset"], world["adjudicated"]

    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
    tiles = page.inner_text(".tiles")
    assert "0 / 3\nPEERS ANNOTATED" in tiles.upper() and "6\nPEER ANNOTATIONS TO REDO" in tiles.upper()
    row = page.inner_text("[data-reannotate=T1]")
    assert "ann3: 3 peers (1, 2, 3)" in row and "ann4: 3 peers (1, 2, 3)" in row
    shown = page.locator("[data-task=annotate_peers] .progress-text").all_inner_texts()
    assert [t.strip() for t in shown] == ["0 of 3 peers done"] * 2
    page.screenshot(path=str(artifacts / "dashboards-overview-reannotate.png"), full_page=True)
    assert errors == []
    page.context.close()

    page, errors = open_as(chromium, live_server, "ann3")
    assert "0 of 3 peers done" in page.inner_text("table.assignments")
    notice = page.locator("[data-reannotate]")
    assert "your annotations of 3 peers are no longer scored" in notice.inner_text()
    page.screenshot(path=str(artifacts / "home-reannotate.png"), full_page=True)
    notice.locator("li[data-peer='1'] button:has-text('Carry over matches')").click()
    page.wait_for_url(re.compile(r".*/annotations/\d+/$"))
    wait_saved(page)
    carried = PeerAnnotation.objects.get(peer__external_id="1", annotator__username="ann3", pyramid=adjudicated)
    assert page.url.endswith(f"/annotations/{carried.pk}/")
    assert "Peer 1: 3 matches carried over to the adjudicated pyramid" in page.inner_text(".messages")
    assert "You annotated this peer against your pyramid before" in page.inner_text("[data-reannotate]")
    assert page.inner_text(".progress-text") == "Peer 1 · 0 of 3 peers done"
    assert carried.matches.count() == 3 and carried.status == "in_progress"
    page.screenshot(path=str(artifacts / "annotator-carried-over.png"))
    page.click("button[data-action=done]")
    page.wait_for_function("() => /Peer 2 ·/.test(document.querySelector('.progress-text').textContent)")
    wait_saved(page)
    assert page.inner_text(".progress-text") == "Peer 2 · 1 of 3 peers done"
    page.goto(f"{live_server.url}/")
    assert "1 of 3 peers done" in page.inner_text("table.assignments")
    assert page.locator("[data-reannotate] li").count() == 2
    assert errors == []
    page.context.close()

    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
    assert "1 / 3\nPEERS ANNOTATED" in page.inner_text(".tiles").upper()
    assert "ann3: 2 peers (2, 3)" in page.inner_text("[data-reannotate=T1]")
    assert errors == []
    page.context.close()

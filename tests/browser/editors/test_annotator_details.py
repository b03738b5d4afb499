"""The peer annotator's finish (issue 14, "Smaller"), in Chromium at 1440x900 with real clicks and
keys: correct plurals, the score panel in view beside a DUC-length peer, refusals worded without
the API's field names. (A conflict and the status pill after it: test_annotator_local_first.py.)"""

import json

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment, PeerSummary
from annotation.peers import assignments
from annotation.peers.models import PeerAnnotation

from tests.browser.editors.browser import UNTOUCHED_PEER_URL, drag_select, login, wait_saved, world
from tests.browser.editors.test_annotator import build_pyramid

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# About 250 words, the length of a DUC peer summary.
LONG_PEER = " ".join(
    ["The old dam failed at night and the valley was flooded."]
    + [
        f"Sentence {i} says that engineers inspected the concrete, found cracks, and warned the town council twice."
        for i in range(1, 18)
    ]
)


@pytest.fixture
def page(chromium, live_server):
    user, topic = world("pat", tasks=("annotate_peers",))
    build_pyramid(topic, User.objects.create_user("builder"))
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    login(page, live_server.url, "pat")
    yield page
    context.close()


def test_plurals_score_in_view_and_messages(page, live_server, artifacts):
    assert "0 of 1 peer done" in page.text_content(".assignments, main")  # the home page
    page.click("button:has-text('Start')")
    page.wait_for_url(UNTOUCHED_PEER_URL)
    wait_saved(page)
    assert page.text_content(".progress-text") == "Peer 1 · 0 of 1 peer done"
    assert not PeerAnnotation.objects.exists(), "opening a peer stores nothing"
    annotation = assignments.annotation_for(Assignment.objects.get(), PeerSummary.objects.get())

    # A DUC-length peer: the score panel is in view without scrolling.
    long_peer = PeerSummary.objects.create(topic=annotation.peer.topic, external_id="2", text=LONG_PEER)
    other = PeerAnnotation.objects.create(
        peer=long_peer, pyramid=annotation.pyramid, annotator=annotation.annotator, status="in_progress"
    )
    page.goto(f"{live_server.url}/annotations/{other.pk}/")
    wait_saved(page)
    box = page.locator(".score-panel").bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 900, f"score panel out of view: {box}"
    assert page.evaluate("() => document.scrollingElement.scrollTop") == 0
    page.screenshot(path=str(artifacts / "annotator-long-peer.png"))
    page.goto(f"{live_server.url}/annotations/{annotation.pk}/")
    wait_saved(page)

    # A refusal is worded for people: no "parts", "end" or list index from the API.
    def refuse(route):
        route.fulfill(
            status=400,
            content_type="application/json",
            body=json.dumps({"parts": {"0": {"end": ["This span ends past the end of the text."]}}}),
        )

    page.route("**/api/matches/", refuse)
    drag_select(page, ".peer-text", "Nobody was hurt")
    page.keyboard.press("u")
    page.wait_for_selector(".banner:not([hidden])")
    assert page.text_content(".banner") == "Not saved: This span ends past the end of the text."
    page.unroute("**/api/matches/")

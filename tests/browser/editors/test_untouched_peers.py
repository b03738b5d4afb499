"""Issue 21 in Chromium with real clicks: opening and looking at peers stores nothing; the first
match in a peer creates its annotation (exactly one row), and the next peer's page, reached by
"Done, next peer", is again no row until the annotator acts; "Done" on a peer with nothing in it is
a finished empty annotation (a score of 0), as before. Each of those first writes is one request:
the annotation is created with it, not by a round trip before it."""

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment, PeerSummary
from annotation.peers import results
from annotation.peers.models import PeerAnnotation

from tests.browser.editors.browser import UNTOUCHED_PEER_URL, drag_select, login, wait_saved, world
from tests.browser.editors.test_annotator import build_pyramid

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_untouched_peers_store_nothing(chromium, live_server, artifacts):
    user, topic = world("pat", tasks=("annotate_peers",))
    pyramid, dam, valley = build_pyramid(topic, User.objects.create_user("builder"))
    for pid, text in [("2", "Two: the dam failed at night."), ("10", "Ten: the valley was flooded.")]:
        PeerSummary.objects.create(topic=topic, external_id=pid, text=text)
    assignment = Assignment.objects.get(annotator=user)
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    writes = []  # every API request that is not a read: (method, path)
    page.on(
        "request",
        lambda r: (
            writes.append((r.method, r.url.split(live_server.url)[1]))
            if "/api/" in r.url and r.method != "GET"
            else None
        ),
    )
    login(page, live_server.url, user.username)

    page.click("button:has-text('Start')")  # open peer 1 and look at it
    page.wait_for_url(UNTOUCHED_PEER_URL)
    wait_saved(page)
    assert "peer 1" in page.text_content("h1") and "0 of 3 peers done" in page.text_content(".progress-text")
    assert page.locator(".scu").count() == 2
    page.screenshot(path=str(artifacts / "annotator-untouched-peer.png"))
    page.goto(f"{live_server.url}/")
    page.click("button:has-text('Start')")  # still "Start": nothing was begun
    page.wait_for_url(UNTOUCHED_PEER_URL)
    wait_saved(page)
    assert PeerAnnotation.objects.count() == 0

    peer2 = topic.peersummarys.get(external_id="2")  # another peer, as a list of peers opens it
    page.goto(f"{live_server.url}/assignments/{assignment.pk}/peers/{peer2.pk}/")
    wait_saved(page)
    assert PeerAnnotation.objects.count() == 0 and writes == []
    drag_select(page, ".peer-text", "the dam failed at night")  # the first action: one match, one request
    page.click(f'.scu[data-id="{dam.pk}"]')
    wait_saved(page)
    [annotation] = PeerAnnotation.objects.all()
    assert (annotation.peer_id, annotation.status) == (peer2.pk, "in_progress")
    assert [(m.scu_id, [(p.start, p.end) for p in m.parts.all()]) for m in annotation.matches.all()] == [
        (dam.pk, [(5, 28)])
    ]
    assert page.url.endswith(f"/annotations/{annotation.pk}/"), "the page now names its annotation (reload, bookmarks)"
    assert writes == [("POST", "/api/matches/")]
    drag_select(page, ".peer-text", "Two")  # a second action: the same annotation
    page.keyboard.press("u")
    wait_saved(page)
    assert PeerAnnotation.objects.count() == 1 and annotation.matches.count() == 2
    page.reload()
    wait_saved(page)
    assert page.locator(".peer-text .seg.covered").count() >= 2

    first_url = page.url
    page.click("[data-action=done]")  # done; the next peer (10) opens, untouched
    page.wait_for_url(lambda url: url != first_url and UNTOUCHED_PEER_URL.match(url) is not None)
    wait_saved(page)
    assert UNTOUCHED_PEER_URL.match(page.url) and "peer 10" in page.text_content("h1")
    assert "1 of 3 peers done" in page.text_content(".progress-text")
    assert PeerAnnotation.objects.count() == 1
    second_url = page.url
    page.click("[data-action=done]")  # done with nothing in it: a finished empty one
    # (the Done first names the new annotation in the address bar: wait for the next peer's page)
    page.wait_for_url(lambda url: url != second_url and UNTOUCHED_PEER_URL.match(url) is not None)
    wait_saved(page)
    assert "peer 1" in page.text_content("h1") and "2 of 3 peers done" in page.text_content(".progress-text")
    empty = PeerAnnotation.objects.get(peer__external_id="10")
    assert empty.status == "done" and not empty.matches.exists()
    assert set(results.counted(PeerAnnotation.objects.all())) == {empty, annotation}  # both finished, scored
    assert PeerAnnotation.objects.count() == 2  # peer 1, opened three times, has none
    peer10 = topic.peersummarys.get(external_id="10")
    assert writes == [
        ("POST", "/api/matches/"),
        ("POST", "/api/matches/"),
        ("PATCH", f"/api/annotations/{annotation.pk}/"),
        ("POST", f"/api/assignments/{assignment.pk}/peers/{peer10.pk}/annotation/"),
    ]  # one request per action
    page.wait_for_load_state("networkidle")
    context.close()


def test_actions_queued_before_the_first_answer_land_in_the_one_annotation(chromium, live_server):
    """Two actions on an untouched peer before the server answered the first (offline here; a slow
    server alike): the first write creates the annotation, the second is built only once that answer
    was applied, so it names the annotation (with the revision the first returned) instead of
    asking for it again, which the server would refuse as a conflict."""
    user, topic = world("pat", tasks=("annotate_peers",))
    pyramid, dam, valley = build_pyramid(topic, User.objects.create_user("builder"))
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    bodies = []  # the JSON body of every match POST, in the order sent
    page.on(
        "request",
        lambda r: bodies.append(r.post_data_json) if r.url.endswith("/api/matches/") and r.method == "POST" else None,
    )
    login(page, live_server.url, user.username)
    page.click("button:has-text('Start')")
    page.wait_for_url(UNTOUCHED_PEER_URL)
    wait_saved(page)
    context.set_offline(True)
    drag_select(page, ".peer-text", "old dam")
    page.click(f'.scu[data-id="{dam.pk}"]')
    drag_select(page, ".peer-text", "valley")
    page.click(f'.scu[data-id="{valley.pk}"]')
    page.wait_for_selector(".save-status[data-status=offline]")
    assert PeerAnnotation.objects.count() == 0
    context.set_offline(False)
    wait_saved(page)
    [annotation] = PeerAnnotation.objects.all()
    assert sorted(m.scu_id for m in annotation.matches.all()) == sorted([dam.pk, valley.pk])
    sent = [b for b in bodies if b]
    assert "assignment" in sent[0] and "annotation" not in sent[0]
    assert sent[-1]["annotation"] == annotation.pk and "assignment" not in sent[-1]
    assert page.locator(".save-status[data-status=conflict]").count() == 0
    context.close()

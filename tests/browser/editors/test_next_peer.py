"""Issue 21 in Chromium: the next peer is prepared before it is asked for. Once a peer has settled
the annotator reads the next peer's document and suggestions in the background (only within the
annotator's own assignment); "Done, next peer" queues the done write and paints the next peer in
the same page (no page load), at its own URL, with its header and progress; its first match
creates its annotation once; back returns to the previous peer; a refused "done" is said and the
peer is shown again; a prepared peer's suggestions are shown as it opens without asking the server,
and the next peer's are read only after a pause in the changes (not beside the saves that follow)."""

import json
import re

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment, PeerSummary
from annotation.peers import actions, assignments
from annotation.peers.models import PeerAnnotation, PeerMatch

from tests.browser.editors.browser import ANNOTATOR_URL, UNTOUCHED_PEER_URL, drag_select, login, wait_saved, world
from tests.browser.editors.test_annotator import build_pyramid
from tests.conftest import REPO

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The pause in the changes before the suggestions are read again (annotator.js).
PREPARE_IDLE_MS = int(
    re.search(r"const PREPARE_IDLE_MS = (\d+);", (REPO / "frontend/static/frontend/js/annotator.js").read_text())[1]
)
API_ASSIGNMENT = re.compile(r"/api/assignments/(\d+)/")
API_ANNOTATION = re.compile(r"/api/annotations/(\d+)/")


@pytest.fixture
def peers(chromium, live_server):
    """Pat's assignment of a topic of three peers, a rival annotator's annotation of peer 2 in their
    own assignment of the same topic (blind: never to be read by Pat's page), Pat's page on peer 1
    (untouched) with every API request it makes recorded."""
    user, topic = world("pat", tasks=("annotate_peers",))
    pyramid, dam, valley = build_pyramid(topic, User.objects.create_user("builder"))
    for pid, text in [("2", "Two: the dam failed at night."), ("10", "Ten: the valley was flooded.")]:
        PeerSummary.objects.create(topic=topic, external_id=pid, text=text)
    rival = User.objects.create_user("rival")
    rival_assignment = Assignment.objects.create(topic=topic, annotator=rival, task=Assignment.Task.ANNOTATE_PEERS)
    rival_annotation = assignments.annotation_for(rival_assignment, topic.peersummarys.get(external_id="2"))
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    requests = []
    page.on(
        "request", lambda request: requests.append((request.method, request.url)) if "/api/" in request.url else None
    )
    login(page, live_server.url, user.username)
    page.click("button:has-text('Start')")
    page.wait_for_url(UNTOUCHED_PEER_URL)
    wait_saved(page)
    page.evaluate("window.__samePage = 'yes'")  # survives only while no page is loaded
    yield page, requests, Assignment.objects.get(annotator=user), dam, rival_annotation
    context.close()


def wait_requested(page, requests, fragment, since=0):
    """Wait until the page asked for a URL containing ``fragment`` (a background read), after the
    first ``since`` requests."""
    for _ in range(400):
        if any(fragment in url for _, url in requests[since:]):
            return
        page.wait_for_timeout(25)
    raise AssertionError(f"the page never asked for {fragment}: {requests}")


def reread_after_a_write(finished, fragment):
    """The timing of the first finished read of ``fragment`` started after the first write started."""
    writes = [timing["startTime"] for method, _, timing in finished if method != "GET"]
    reads = [
        timing for method, url, timing in finished if fragment in url and writes and timing["startTime"] > min(writes)
    ]
    return min(reads, key=lambda timing: timing["startTime"], default=None)


def test_done_paints_the_next_peer_in_place(peers, artifacts):
    page, requests, assignment, dam, rival_annotation = peers
    peer1, peer2 = (assignment.topic.peersummarys.get(external_id=e) for e in ("1", "2"))
    drag_select(page, ".peer-text", "dam failed at night")
    page.click(f'.scu[data-id="{dam.pk}"]')
    wait_saved(page)
    first = PeerAnnotation.objects.get(peer=peer1)
    wait_requested(page, requests, f"/api/assignments/{assignment.pk}/peers/{peer2.pk}/full/")  # read ahead
    wait_requested(page, requests, f"/api/assignments/{assignment.pk}/peers/{peer2.pk}/suggestions/")
    page.screenshot(path=str(artifacts / "annotator-before-next-peer.png"))

    page.keyboard.press("Shift+N")
    page.wait_for_url(f"**/assignments/{assignment.pk}/peers/{peer2.pk}/")
    wait_saved(page)
    page.screenshot(path=str(artifacts / "annotator-next-peer-in-place.png"))
    assert page.evaluate("window.__samePage") == "yes", "the next peer was painted in the same page, not loaded"
    assert "T9 · peer 2" in page.text_content("h1") and page.title().startswith("Peer 2 · T9")
    assert "Peer 2 · 1 of 3 peers done" in page.text_content(".progress-text")
    assert page.text_content(".peer-text") == peer2.text and not page.locator(".peer-text .seg.covered").count()
    assert page.text_content(".last-action") == "" and page.locator(".scu.selected").count() == 0
    first.refresh_from_db()
    assert first.status == "done"
    assert not PeerAnnotation.objects.filter(peer=peer2, annotator=assignment.annotator).exists(), (
        "opening stores nothing"
    )

    drag_select(page, ".peer-text", "the dam failed at night")  # the next peer's matches work...
    page.click(f'.scu[data-id="{dam.pk}"]')
    drag_select(page, ".peer-text", "Two")
    page.click('.toolbar [data-action="non-matching"]')
    wait_saved(page)
    [second] = PeerAnnotation.objects.filter(
        peer=peer2, annotator=assignment.annotator
    )  # ...and create its annotation once
    assert sorted((m.parts.get().start, m.scu_id) for m in second.matches.all()) == [(0, None), (5, dam.pk)]
    assert page.url.endswith(f"/annotations/{second.pk}/")
    assert PeerMatch.objects.filter(annotation=first).count() == 1, "nothing of the next peer went to the previous one"
    assert "✓" in page.text_content(f'.scu[data-id="{dam.pk}"]')

    page.go_back()  # back: the previous peer, as stored
    page.wait_for_url(ANNOTATOR_URL)
    wait_saved(page)
    assert "peer 1" in page.text_content("h1") and page.evaluate("window.__samePage") is None
    assert page.locator(".peer-text .seg.covered").count() >= 1
    page.go_forward()
    page.wait_for_url(f"**/annotations/{second.pk}/")
    wait_saved(page)
    assert "peer 2" in page.text_content("h1") and page.locator(".peer-text .seg.covered").count() >= 2

    # The blind rule: every API request named Pat's assignment or Pat's own annotations, never the rival's.
    own = set(PeerAnnotation.objects.filter(annotator=assignment.annotator).values_list("pk", flat=True))
    for _, url in requests:
        if found := API_ASSIGNMENT.search(url):
            assert int(found[1]) == assignment.pk, url
        if found := API_ANNOTATION.search(url):
            assert int(found[1]) in own and int(found[1]) != rival_annotation.pk, url


def test_suggestions_shown_on_open_and_read_ahead_for_the_next_peer(peers):
    page, requests, assignment, dam, _ = peers
    peer1, peer2 = (assignment.topic.peersummarys.get(external_id=e) for e in ("1", "2"))
    own = f"/api/assignments/{assignment.pk}/peers/{peer1.pk}/suggestions/"
    page.wait_for_selector(".suggestion-list .suggestion")  # shown as the peer opened: read once, no key
    assert len([url for _, url in requests if own in url]) == 1
    before_accept, finished = len(requests), []
    page.on("requestfinished", lambda request: finished.append((request.method, request.url, request.timing)))
    page.keyboard.press("a")  # every suggestion shown, in one request
    wait_saved(page)
    # The next peer's suggestions are read after a pause in the changes (as of the accepted matches:
    # read after they were saved), not at once beside the save. Both moments on the browser's clock:
    # a slow machine only lengthens the pause measured, and a read made at once is ~0 ms after the save.
    theirs = f"/api/assignments/{assignment.pk}/peers/{peer2.pk}/suggestions/"
    # The read made as the peer settled (before A) may still be reported late, or still be in flight:
    # the read meant is the first one started after the accept's write.
    wait_requested(page, requests, theirs, since=before_accept)
    for _ in range(2400):
        reread = reread_after_a_write(finished, theirs)
        if reread:
            break
        page.wait_for_timeout(25)
    assert reread, f"the next peer's suggestions were not read again after the accept: {finished}"
    saved = [
        t["startTime"] + t["responseEnd"]
        for method, _, t in finished
        if method != "GET" and t["startTime"] < reread["startTime"]
    ]
    assert saved, finished
    assert reread["startTime"] - max(saved) >= PREPARE_IDLE_MS - 50, "the next suggestions were read beside a save"
    assert [url for _, url in requests[before_accept:] if own in url] == [], "the peer's own were read again"
    page.wait_for_load_state("networkidle")
    asked = len([url for _, url in requests if "/suggestions/" in url])
    page.click('.toolbar [data-action="done"]')
    page.wait_for_url(f"**/assignments/{assignment.pk}/peers/{peer2.pk}/")
    page.wait_for_selector(".suggestion-list .suggestion")  # the next peer's, shown from the read made ahead
    assert len([url for _, url in requests if "/suggestions/" in url]) == asked, (
        "the next peer's suggestions were not read ahead"
    )
    assert "dam failed at night" in page.text_content(".suggestion-list")
    before_s = len(requests)
    page.keyboard.press("s")  # S again: read anew (as of the matches made since)
    wait_requested(page, requests, theirs, since=before_s)


def test_a_refused_done_shows_the_peer_again(peers):
    page, requests, assignment, dam, _ = peers
    peer1 = assignment.topic.peersummarys.get(external_id="1")
    drag_select(page, ".peer-text", "dam failed at night")
    page.click(f'.scu[data-id="{dam.pk}"]')
    wait_saved(page)
    first = PeerAnnotation.objects.get(peer=peer1)

    def refuse(route):
        if route.request.method == "PATCH":
            route.fulfill(
                status=400, content_type="application/json", body=json.dumps({"detail": "This assignment is closed."})
            )
        else:
            route.continue_()

    page.route(f"**/api/annotations/{first.pk}/", refuse)
    page.click('.toolbar [data-action="done"]')
    page.wait_for_selector(".banner:not([hidden])")
    wait_saved(page)
    banner = page.text_content(".banner")
    assert "Peer 1 was not marked done: This assignment is closed." in banner, banner
    assert page.url.endswith(f"/annotations/{first.pk}/") and "peer 1" in page.text_content("h1")
    assert page.evaluate("window.__samePage") == "yes"
    assert page.locator(".peer-text .seg.covered").count() >= 1, "the match is still shown"
    first.refresh_from_db()
    assert first.status == "in_progress" and first.matches.count() == 1
    page.unroute(f"**/api/annotations/{first.pk}/")
    page.click('.toolbar [data-action="done"]')  # accepted now: on to peer 2
    page.wait_for_url(UNTOUCHED_PEER_URL)
    wait_saved(page)
    first.refresh_from_db()
    assert first.status == "done" and "peer 2" in page.text_content("h1")


def test_a_next_peer_changed_since_it_was_read_ahead_is_never_overwritten(peers):
    """Read ahead untouched, then started in another tab with a match: the first action here is
    refused as a conflict (the revision this page read travels with it) and the page shows the
    other tab's match; nothing is added to what this page never showed."""
    page, requests, assignment, dam, _ = peers
    peer2 = assignment.topic.peersummarys.get(external_id="2")
    wait_requested(page, requests, f"/api/assignments/{assignment.pk}/peers/{peer2.pk}/full/")
    page.wait_for_load_state("networkidle")
    other_tab = assignments.annotation_for(assignment, peer2)
    actions.match_span(other_tab, assignment.annotator, scu=None, spans=[(0, 3)])
    page.click('.toolbar [data-action="done"]')
    page.wait_for_url(f"**/assignments/{assignment.pk}/peers/{peer2.pk}/")
    wait_saved(page)
    assert (
        page.evaluate("window.__samePage") == "yes" and not page.locator(".peer-text .seg.covered").count()
    )  # as read ahead
    drag_select(page, ".peer-text", "the dam failed at night")
    page.click(f'.scu[data-id="{dam.pk}"]')
    page.wait_for_selector(".banner:not([hidden])")
    wait_saved(page)
    assert "changed elsewhere" in page.text_content(".banner")
    assert page.locator(".peer-text .seg.covered").count() == 1, "the other tab's match is shown now"
    assert [m.scu_id for m in other_tab.matches.all()] == [None], "nothing was added to what the page had not shown"


def test_the_next_peer_read_ahead_is_corrected_for_the_peer_just_done(chromium, live_server):
    """next_peer.js ``afterDone``: read while the finished peer was not done, the next peer's
    progress counts it now, and its own next never names it (then there is none left)."""
    page = chromium.new_page()
    page.goto(f"{live_server.url}/healthz")
    after = page.evaluate("""async () => {
      const { afterDone } = await import('/static/frontend/js/next_peer.js');
      const body = (next) => ({ progress: { done: 1, total: 3 }, next });
      const other = { assignment: 4, peer_id: 12, annotation: null };
      return [
        afterDone(body(other), { peer: 10, wasDone: false }),
        afterDone(body({ ...other, peer_id: 10 }), { peer: 10, wasDone: false }),
        afterDone(body(other), { peer: 10, wasDone: true }),
        afterDone(body(other), { peer: 10, wasDone: false, counted: true }),
      ];
    }""")
    page.close()
    assert after[0] == {
        "progress": {"done": 2, "total": 3},
        "next": {"assignment": 4, "peer_id": 12, "annotation": None},
    }
    assert after[1]["next"] is None and after[1]["progress"]["done"] == 2
    assert after[2]["progress"]["done"] == 1, "a peer done before is counted once"
    assert after[3]["progress"]["done"] == 1, "read after its done was saved: the server counted it"

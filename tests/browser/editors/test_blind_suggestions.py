"""Issue 21's blind rule in Chromium: no suggestion the annotator is shown rests on another
annotator's work. Another annotator's annotations of the same peer and of the topic's other peer
(finished, with a pairing nothing else suggests) leave the suggestions shown identical, key by
key, to those shown once they are deleted; the annotator's own earlier peer, with the same pairing,
does bring it (so the pairing would show if another's work leaked in)."""

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment, PeerSummary
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU

from tests.browser.editors.browser import login, world
from tests.browser.editors.test_annotator import build_pyramid

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAIRING = "Nobody was hurt"  # matched to the concrete's SCU only in the planted annotations


def annotate(peer, pyramid, annotator, scu):
    """A finished annotation of ``peer`` by ``annotator`` matching PAIRING to ``scu``."""
    annotation = PeerAnnotation.objects.create(
        peer=peer, pyramid=pyramid, annotator=annotator, status=PeerAnnotation.Status.DONE
    )
    match = PeerMatch.objects.create(annotation=annotation, scu=scu)
    start = peer.text.index(PAIRING)
    PeerMatchPart.objects.create(match=match, start=start, end=start + len(PAIRING))
    return annotation


def shown_suggestions(page, url):
    """Open ``url`` and read every suggestion shown as it opens (no key), nine at a time: each page
    struck whole (its digits) and A pressed, which accepts none and shows the next."""
    page.goto(url)
    page.wait_for_selector("#annotator .peer-text .seg")
    page.wait_for_load_state("networkidle")  # the suggestions' read answered
    shown = []
    while True:
        page.wait_for_function(
            "() => { const bar = document.querySelector('.suggestion-bar');"
            " return bar.hidden || !bar.querySelector('button[data-action=accept]').disabled; }"
        )
        if page.is_hidden(".suggestion-bar"):
            break
        rows = page.locator(".suggestion-list .suggestion").all_text_contents()
        shown += [row.split(" ", 1)[1] for row in rows]  # without its number
        for n in range(1, len(rows) + 1):
            page.keyboard.press(str(n))
        page.keyboard.press("a")
    assert not shown or page.text_content(".last-action").startswith("Accepted none"), page.text_content(".last-action")
    return shown


def test_another_annotators_work_never_reaches_the_suggestions(chromium, live_server, artifacts):
    user, topic = world("pat", tasks=("annotate_peers",))
    pyramid, dam, valley = build_pyramid(topic, User.objects.create_user("builder"))
    concrete = SCU.objects.create(pyramid=pyramid, uid=3, label="Engineers blamed old concrete")
    reference = topic.referencesummarys.get(external_id="A")
    start = reference.text.index("Engineers blamed the old concrete")
    add_contributor(concrete, reference, [(start, start + len("Engineers blamed the old concrete"))])
    peer = PeerSummary.objects.get(topic=topic, external_id="1")
    other_peer = PeerSummary.objects.create(topic=topic, external_id="2", text=f"{PAIRING} when the old dam failed.")
    assignment = Assignment.objects.get(annotator=user)
    url = f"{live_server.url}/assignments/{assignment.pk}/peers/{peer.pk}/"  # untouched: nothing stored by opening it
    kim = User.objects.create_user("kim")
    Assignment.objects.create(topic=topic, annotator=kim, task=Assignment.Task.ANNOTATE_PEERS)
    planted = [annotate(peer, pyramid, kim, concrete), annotate(other_peer, pyramid, kim, concrete)]

    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    login(page, live_server.url, user.username)
    with_planted = shown_suggestions(page, url)
    page.screenshot(path=str(artifacts / "annotator-blind-suggestions.png"))
    for annotation in planted:
        annotation.delete()
    without = shown_suggestions(page, url)
    assert with_planted == without
    assert with_planted and not any(PAIRING in s for s in with_planted), with_planted

    # The control: the same pairing in the annotator's own earlier peer is suggested, so the
    # comparison above would have seen it had another annotator's work been read.
    annotate(other_peer, pyramid, user, concrete)
    own = shown_suggestions(page, url)
    assert any(s.startswith("(1) Engineers blamed old concrete ") and s.endswith(f"% “{PAIRING}”") for s in own), own
    assert not PeerAnnotation.objects.filter(peer=peer, annotator=user).exists(), "reading suggestions stores nothing"
    context.close()

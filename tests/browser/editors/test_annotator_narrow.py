"""The peer annotator on a tablet (768x1024) and a phone (390x844), in Chromium: a person completes
a peer with the mouse (select text, match it to an SCU, "Done, next peer") as the desktop tests do,
on a page no wider than the screen. The panes stack there and the head stays at the top of the
screen: the peer text, the SCU list and the toolbar are all within reach, and a change of the save
status (offline here) moves nothing under the pointer, as at 1280 (test_annotator_local_first)."""

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import PeerSummary
from annotation.peers.models import PeerAnnotation

from tests.browser.editors.browser import (
    UNTOUCHED_PEER_URL,
    boxes,
    drag_select,
    login,
    wait_saved,
    world,
)
from tests.browser.editors.test_annotator import build_pyramid, spans

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# What must be on screen, side to side, for the annotator to work: the text, the list, the actions.
WITHIN_REACH = (".peer-text", ".scu-list", ".toolbar", ".save-status", "[data-action=done]")


def horizontal_overflow(page, selectors=WITHIN_REACH) -> list[str]:
    """What is not within the screen's width: the page itself, or one of ``selectors``."""
    return page.evaluate(
        """(selectors) => {
          const wide = document.documentElement.scrollWidth;
          const out = wide > innerWidth ? [`page ${wide} px wide`] : [];
          for (const s of selectors) { const r = document.querySelector(s).getBoundingClientRect();
            if (r.left < 0 || r.right > innerWidth)
              out.push(`${s} from ${Math.round(r.left)} to ${Math.round(r.right)} px`); }
          return out;
        }""",
        list(selectors),
    )


def in_view(page, selector) -> bool:
    box = page.locator(selector).bounding_box()
    viewport = page.viewport_size
    return box is not None and 0 <= box["y"] and box["y"] + box["height"] <= viewport["height"]


@pytest.mark.parametrize("width, height", [(768, 1024), (390, 844)], ids=["tablet", "phone"])
def test_a_peer_is_completed_on_a_narrow_screen(chromium, live_server, artifacts, width, height):
    user, topic = world("pat", tasks=("annotate_peers",))
    _pyramid, dam, _valley = build_pyramid(topic, User.objects.create_user("builder"))
    PeerSummary.objects.create(topic=topic, external_id="2", text="The valley flooded after the dam failed.")
    context = chromium.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    try:
        login(page, live_server.url, user.username)
        assert horizontal_overflow(page, ["td.actions button"]) == [], "the home page and its Start"
        page.click("button:has-text('Start')")
        page.wait_for_url(UNTOUCHED_PEER_URL)
        wait_saved(page)
        # The suggestions shown as the peer opens (below its text: on a narrow screen they move what
        # is below them as they arrive, so the layout is measured once they are in).
        page.wait_for_selector(".suggestion-bar:not([hidden]) button[data-action=accept]:not([disabled])")
        first_url = page.url
        assert horizontal_overflow(page) == []

        drag_select(page, ".peer-text", "old dam failed at night")
        scu = page.locator(f'.scu[data-id="{dam.pk}"]')
        scu.evaluate("(element) => element.scrollIntoView({block: 'center'})")  # below the sticky head
        layout = boxes(page, *WITHIN_REACH)
        context.set_offline(True)
        box = scu.bounding_box()
        page.mouse.click(
            box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        )  # no scrolling: the pointer stays put
        page.wait_for_selector(".save-status[data-status=offline]")
        assert boxes(page, *WITHIN_REACH) == layout, "the status message moved the page under the pointer"
        context.set_offline(False)
        wait_saved(page)
        annotation = PeerAnnotation.objects.get(peer__external_id="1", annotator=user)
        assert spans(annotation) == [(1, ["old dam failed at night"])]
        page.screenshot(path=str(artifacts / f"annotator-{width}px-matched.png"))

        assert in_view(page, "[data-action=done]"), (
            "the toolbar stays on screen when the page is scrolled to the SCU list"
        )
        assert horizontal_overflow(page) == []
        page.click("[data-action=done]")
        page.wait_for_url(lambda url: url != first_url and UNTOUCHED_PEER_URL.match(url))
        wait_saved(page)
        assert "peer 2" in page.text_content("h1")
        annotation.refresh_from_db()
        assert annotation.status == PeerAnnotation.Status.DONE
    finally:
        context.close()

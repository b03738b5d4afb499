"""Issue 30 §3, the suggestion flow in Chromium with real keys: the suggestions are shown as the
peer opens (no key), the most confident first, their words outlined in the peer; a digit strikes
the wrong one (and restores it); A accepts every one shown and not struck in one request, which
makes exactly those matches (one action: one Ctrl+Z undoes them all); the status line says each."""

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment
from annotation.history.models import Change
from annotation.peers import assignments

from tests.browser.editors.browser import login, status, wait_saved, world
from tests.browser.editors.test_annotator import build_pyramid
from tests.browser.editors.test_annotator_local_first import saved

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOWN = (
    "() => [...document.querySelectorAll('.suggestion-bar:not([hidden]) .suggestion-list .suggestion')].map((r) => "
    "[Number(r.dataset.scu), r.dataset.parts, r.classList.contains('struck')])"
)

# The words each CSS highlight of the peer covers (annotator.js outlineSuggestions).
OUTLINED = (
    "() => Object.fromEntries(['peer-suggested', 'peer-suggested-struck'].map((name) => "
    "[name, [...(CSS.highlights.get(name) ?? [])].map((r) => r.toString()).sort()]))"
)


@pytest.fixture
def opened(chromium, live_server):
    """Pat's page on an annotation started earlier (peer 1: two suggestions, the dam's and the
    valley's), every POST it sends recorded, and the ranking the API gives, to compare with."""
    user, topic = world("pat", tasks=("annotate_peers",))
    pyramid, dam, valley = build_pyramid(topic, User.objects.create_user("builder"))
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "/api/" in r.url else None)
    annotation = assignments.annotation_for(Assignment.objects.get(annotator=user))
    login(page, live_server.url, user.username)
    page.click("button:has-text('Continue')")
    page.wait_for_url(f"**/annotations/{annotation.pk}/")
    ranked = page.evaluate(
        f"async () => (await (await fetch('/api/annotations/{annotation.pk}/suggestions/')).json()).suggestions"
    )
    assert [s["scu"] for s in ranked] == [dam.pk, valley.pk]  # the world gives both, most confident first
    yield page, annotation, ranked, posts
    context.close()


def parts_of(suggestion):
    return ",".join(f"{p['start']}-{p['end']}" for p in suggestion["parts"])


def texts(annotation, suggestion):
    return [annotation.peer.text[p["start"] : p["end"]] for p in suggestion["parts"]]


def test_suggestions_are_shown_as_the_peer_opens(opened, artifacts):
    page, annotation, ranked, posts = opened
    page.wait_for_selector(".suggestion-list .suggestion")  # no key pressed
    assert page.evaluate(SHOWN) == [[s["scu"], parts_of(s), False] for s in ranked]
    rows = page.locator(".suggestion-list .suggestion").all_text_contents()
    first, second = (texts(annotation, s) for s in ranked)
    assert rows[0] == f"1 (3) The dam failed at night {round(100 * ranked[0]['confidence'])}% “{first[0]}”"
    assert rows[1] == f"2 (2) The valley flooded {round(100 * ranked[1]['confidence'])}% “{second[0]}”"
    assert page.evaluate(OUTLINED) == {"peer-suggested": sorted(first + second), "peer-suggested-struck": []}
    assert page.text_content(".suggestion-text") == "Suggested: 2 of 2 to accept"
    assert saved(annotation) == [] and posts == []  # shown is not matched
    assert page.is_visible("dialog.help >> text=Accept every suggestion shown and not struck") is False
    page.keyboard.press("?")  # the guide names the keys
    help_text = page.text_content("dialog.help")
    assert "strike the wrong suggestion of that number" in help_text and "Accept every suggestion shown" in help_text
    page.screenshot(path=str(artifacts / "annotator-suggestions-on-open.png"))


def test_strike_then_accept_all_makes_exactly_the_others_and_undo_restores(opened, artifacts):
    page, annotation, ranked, posts = opened
    page.wait_for_selector(".suggestion-list .suggestion")
    first, second = (texts(annotation, s) for s in ranked)
    page.keyboard.press("2")  # strike the valley's
    assert [row[2] for row in page.evaluate(SHOWN)] == [False, True]
    assert status(page).startswith(f"Struck suggestion 2: “{second[0]}” → (2) The valley flooded")
    # In the peer (CSS highlights: the text's nodes untouched): words another suggestion still offers
    # are not shown struck (here both name the same words); once both are struck, they are.
    assert page.evaluate(OUTLINED) == {"peer-suggested": first, "peer-suggested-struck": []}
    page.keyboard.press("1")
    assert page.evaluate(OUTLINED) == {"peer-suggested": [], "peer-suggested-struck": sorted(first + second)}
    page.keyboard.press("1")
    assert [row[2] for row in page.evaluate(SHOWN)] == [False, True]
    page.keyboard.press("2")  # restored
    assert [row[2] for row in page.evaluate(SHOWN)] == [False, False]
    assert status(page).startswith("Restored suggestion 2")
    page.keyboard.press("2")
    page.screenshot(path=str(artifacts / "annotator-suggestion-struck.png"))
    page.keyboard.press("a")
    page.wait_for_selector(".suggestion-bar", state="hidden")
    wait_saved(page)
    assert saved(annotation) == [(1, first)], "exactly the suggestion not struck was matched"
    assert [u for u in posts if "/api/matches/" in u] == [posts[-1]] and posts[-1].endswith("/api/matches/accept/")
    assert status(page) == "Accepted 1 suggestion (1 struck): (3) The dam failed at night. Ctrl+Z undoes them at once."
    page.keyboard.press("Control+z")
    wait_saved(page)
    assert saved(annotation) == []
    assert status(page) == "Undone."


def test_accept_all_is_one_step_of_undo(opened):
    page, annotation, ranked, posts = opened
    page.wait_for_selector(".suggestion-list .suggestion")
    page.keyboard.press("a")
    wait_saved(page)
    expected = sorted([(1, texts(annotation, ranked[0])), (2, texts(annotation, ranked[1]))])
    assert saved(annotation) == expected
    assert Change.objects.filter(annotation=annotation).count() == 1
    assert page.locator(".scu .found").count() == 2  # painted: both SCUs found
    page.keyboard.press("Control+z")  # one undo: both gone
    wait_saved(page)
    assert saved(annotation) == [] and page.locator(".scu .found").count() == 0
    page.keyboard.press("Control+Shift+z")  # and one redo brings both back
    wait_saved(page)
    assert saved(annotation) == expected
    page.keyboard.press("s")  # S shows them again: none left (both matched), and says so
    page.wait_for_function("() => document.querySelector('.last-action').textContent.startsWith('No suggestions')")
    assert page.is_hidden(".suggestion-bar")

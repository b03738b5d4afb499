"""Helpers for driving the editors in Chromium like a person: log in, select text with a real
mouse drag, wait for saves."""

import re

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic

PASSWORD = "a-long-test-password"

# The annotator page: an annotation's, or an untouched peer's (no annotation until the first action).
ANNOTATOR_URL = re.compile(r".*/(annotations/\d+|assignments/\d+/peers/\d+)/$")
UNTOUCHED_PEER_URL = re.compile(r".*/assignments/\d+/peers/\d+/$")

REFERENCES = {
    "A": "The dam burst at night and the valley flooded.\nEngineers blamed the old concrete.",
    "B": "Café owners 🎉 said the flood hit Zoe\u0308's street first; the dam had failed.",
    "C": "大坝在夜间决堤，山谷被淹。工程师归咎于旧混凝土。",
    "D": "הסכר קרס בלילה והעמק הוצף.",
}
PEERS = {"1": "The old dam failed at night 🎉 and the valley was flooded. Nobody was hurt."}


def world(username="ann", tasks=("build_pyramid",)):
    user = User.objects.create_user(username, password=PASSWORD)
    dataset, _ = Dataset.objects.get_or_create(name="Browser")
    topic = Topic.objects.create(dataset=dataset, external_id="T9", title="A dam bursts")
    for rid, text in REFERENCES.items():
        ReferenceSummary.objects.create(topic=topic, external_id=rid, text=text)
    for pid, text in PEERS.items():
        PeerSummary.objects.create(topic=topic, external_id=pid, text=text)
    for task in tasks:
        Assignment.objects.create(topic=topic, annotator=user, task=task)
    return user, topic


def login(page, base_url, username):
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/")


def drag_select(page, container_selector, phrase, shift=False, modifier=None):
    """Select ``phrase`` inside the container with a real mouse drag (from its first to its last
    character), Shift held when ``shift``, else ``modifier`` (e.g. "Control") when given."""
    box = page.evaluate(
        """([selector, phrase]) => {
            const root = document.querySelector(selector);
            const text = root.textContent;
            const at = text.indexOf(phrase);
            if (at < 0) throw new Error(`phrase not found: ${phrase}`);
            const locate = (u16) => { const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT); let off = 0;
                for (let n = w.nextNode(); n; n = w.nextNode()) { if (off + n.data.length > u16) return [n,
                  u16 - off]; off += n.data.length; } };
            const rect = (u16) => { const [n, o] = locate(u16); const r = document.createRange(); r.setStart(n, o);
              r.setEnd(n, o + 1);
                const rs = r.getClientRects(); return rs[0]; };
            const first = rect(at), last = rect(at + phrase.length - 1);
            const rtl = getComputedStyle(root).direction === 'rtl' || /[\\u0590-\\u08FF]/.test(phrase);
            return rtl ? {x1: first.right - 1, y1: first.top + first.height / 2, x2: last.left + 1,
              y2: last.top + last.height / 2}
                       : {x1: first.left + 1, y1: first.top + first.height / 2, x2: last.right - 1,
                         y2: last.top + last.height / 2};
        }""",
        [container_selector, phrase],
    )
    held = "Shift" if shift else modifier
    if held:
        page.keyboard.down(held)
    page.mouse.move(box["x1"], box["y1"])
    page.mouse.down()
    page.mouse.move((box["x1"] + box["x2"]) / 2, (box["y1"] + box["y2"]) / 2, steps=3)
    page.mouse.move(box["x2"], box["y2"], steps=3)
    page.mouse.up()
    if held:
        page.keyboard.up(held)


def program_select(page, container_selector, phrase):
    """Set the selection programmatically (keyboard-only flows: a read-only text has no caret to select with keys)."""
    page.evaluate(
        """([selector, phrase]) => {
            const root = document.querySelector(selector);
            const at = root.textContent.indexOf(phrase);
            const locate = (u16) => { const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT); let off = 0;
                for (let n = w.nextNode(); n; n = w.nextNode()) { if (off + n.data.length >= u16) return [n,
                  u16 - off]; off += n.data.length; } };
            const r = document.createRange(); r.setStart(...locate(at)); r.setEnd(...locate(at + phrase.length));
            getSelection().removeAllRanges(); getSelection().addRange(r);
            root.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
        }""",
        [container_selector, phrase],
    )


def boxes(page, *selectors):
    """Where each element is on the page (its bounding box, rounded to the pixel): what must not move
    while the user points at it."""
    return page.evaluate(
        "(selectors) => selectors.map((s) => { const r = "
        "document.querySelector(s).getBoundingClientRect(); return [s, Math.round(r.x), Math.round(r.y), "
        "Math.round(r.width)]; })",
        list(selectors),
    )


def wait_saved(page):
    page.wait_for_function(
        "() => document.querySelector('.save-status')?.dataset.status === 'saved' && "
        "document.querySelector('.editor.ready') && !document.querySelector('.editor').dataset.busy"
    )
    page.wait_for_timeout(50)


def status(page):
    """What the editor's status line says of the last action."""
    return page.text_content(".last-action")


def wait_status(page, pattern):
    """Wait until the status line says ``pattern`` (a regular expression), and return it."""
    page.wait_for_function(
        "(pattern) => new RegExp(pattern).test(document.querySelector('.last-action').textContent)", arg=pattern
    )
    return status(page)


def open_builder_page(chromium, live_server, user, viewport):
    """``user`` logged in a new context, their first pyramid opened in the builder and loaded; the
    page and its context (a JavaScript error fails the test)."""
    context = chromium.new_context(viewport=viewport)
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    login(page, live_server.url, user.username)
    page.click("button:has-text('Start')")
    page.wait_for_url("**/build/")
    wait_saved(page)
    return page, context

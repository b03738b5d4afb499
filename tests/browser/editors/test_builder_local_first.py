"""The builder applies an action in the page at once and the server confirms it: painted while
still unsaved (offline), rolled back with the reason when the server refuses, undo/redo the same
way with the ids the server gives back; and DUCView's list tools: order, collapse, stepping
through an SCU's contributors in the texts, find by regular expression (stopped when too slow)."""

import re

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import PeerSummary
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids import actions
from annotation.pyramids.models import SCU, Contributor, Pyramid

from tests.browser.editors.browser import REFERENCES, program_select, wait_saved
from tests.browser.editors.test_builder import builder, ref  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def span(rid, phrase):
    start = REFERENCES[rid].index(phrase)
    return [(start, start + len(phrase))]


def seed(topic, user, scus):
    """scus: [(label, [(rid, phrase), ...])] created through the services (as the API would)."""
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    references = {r.external_id: r for r in pyramid.references.all()}
    made = []
    for label, contributors in scus:
        (rid, phrase), *rest = contributors
        scu = actions.create_scu(pyramid, user, label=label, reference=references[rid], spans=span(rid, phrase)).value
        for rid, phrase in rest:
            actions.add_contributor_to(scu, user, reference=references[rid], spans=span(rid, phrase))
        made.append(scu)
    return pyramid, made


def labels(page):
    return page.evaluate("() => [...document.querySelectorAll('.scu:not([hidden]) .label')].map((l) => l.textContent)")


def test_painted_at_once_refused_changes_roll_back(builder, artifacts):  # noqa: F811  (the imported fixture)
    page, user, topic, context = builder
    pyramid, (matched,) = seed(
        topic, user, [("The dam burst", [("A", "dam burst at night"), ("B", "the dam had failed")])]
    )
    peer = PeerSummary.objects.get(topic=topic)
    annotation = PeerAnnotation.objects.create(
        peer=peer, pyramid=pyramid, annotator=User.objects.create_user("someone")
    )
    match = PeerMatch.objects.create(annotation=annotation, scu=matched)
    PeerMatchPart.objects.create(match=match, start=0, end=12)
    page.reload()
    wait_saved(page)

    context.set_offline(True)  # no server to answer: still painted at once
    program_select(page, ref(page, "C"), "工程师归咎于旧混凝土")
    page.keyboard.press("n")
    assert page.is_visible(".label-edit") and page.input_value(".label-edit") == "工程师归咎于旧混凝土"
    page.keyboard.press("Enter")
    assert "WEIGHT 1 · 1 SCU" in page.inner_text(".scu-list").upper()
    assert page.locator(".ref-text .seg.covered", has_text="工程师归咎于旧混凝土").count() == 1
    page.wait_for_function("() => document.querySelector('.save-status').dataset.status === 'offline'")
    assert SCU.objects.filter(pyramid=pyramid).count() == 1
    context.set_offline(False)
    wait_saved(page)
    assert SCU.objects.filter(pyramid=pyramid).count() == 2

    page.on("dialog", lambda dialog: dialog.accept())
    page.click(f'.scu[data-id="{matched.pk}"] .label')
    page.keyboard.press("Delete")  # the server refuses: peers are matched to it
    banner = page.wait_for_selector(".banner:not([hidden])")
    wait_saved(page)
    assert (
        "Not saved, so undone here" in banner.text_content() and "matched in 1 peer annotation" in banner.text_content()
    )
    assert page.is_visible(f'.scu[data-id="{matched.pk}"]'), "the refused deletion is rolled back"
    assert labels(page)[0] == "The dam burst" and SCU.objects.filter(pk=matched.pk).exists()
    page.screenshot(path=str(artifacts / "builder-refused-rolled-back.png"))


def test_undo_and_redo_are_painted_at_once_then_confirmed(builder):  # noqa: F811  (the imported fixture)
    page, user, topic, context = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    program_select(page, ref(page, "A"), "Engineers blamed the old concrete")
    page.keyboard.press("n")
    page.keyboard.press("Enter")
    program_select(page, ref(page, "B"), "the dam had failed")  # a second action before the first is saved
    page.keyboard.press("a")
    wait_saved(page)
    scu = SCU.objects.get(pyramid=pyramid)
    assert scu.contributors.count() == 2 and page.text_content(".scu .weight") == "2"

    context.set_offline(True)
    page.keyboard.press("Control+z")  # painted although nothing can be sent
    assert page.text_content(".scu .weight") == "1"
    page.keyboard.press("Control+z")
    assert page.locator(".scu").count() == 0
    context.set_offline(False)
    wait_saved(page)
    assert not SCU.objects.filter(pyramid=pyramid).exists()
    page.keyboard.press("Control+Shift+z")
    assert page.locator(".scu").count() == 1
    wait_saved(page)
    recreated = SCU.objects.get(pyramid=pyramid)  # the server recreates it: new ids
    assert page.get_attribute(".scu", "data-id") == str(recreated.pk)
    contributor = recreated.contributors.get()
    assert page.get_attribute(".contrib", "data-id") == str(contributor.pk)
    page.click(f'.contrib[data-id="{contributor.pk}"]')  # and the new ids work for the next action
    program_select(page, ref(page, "A"), "valley flooded")
    page.keyboard.press("p")
    wait_saved(page)
    assert [p.start for p in Contributor.objects.get(pk=contributor.pk).parts.order_by("start")] == [
        REFERENCES["A"].index("valley flooded"),
        REFERENCES["A"].index("Engineers"),
    ]
    assert page.locator(".banner:not([hidden])").count() == 0


def test_order_collapse_step_and_find(builder, artifacts):  # noqa: F811  (the imported fixture)
    page, user, topic, _ = builder
    slow = "a" * 28 + "!"
    seed(
        topic,
        user,
        [
            ("Concrete blamed", [("A", "Engineers blamed the old concrete")]),
            ("Dam failed", [("B", "the dam had failed"), ("A", "dam burst at night"), ("C", "大坝在夜间决堤")]),
            ("Valley flooded", [("A", "valley flooded"), ("C", "山谷被淹")]),
            (slow, [("D", "הסכר קרס בלילה")]),
        ],
    )
    page.reload()
    wait_saved(page)
    assert labels(page) == ["Dam failed", "Valley flooded", slow, "Concrete blamed"]  # by weight, then label
    page.select_option(".sort", "label")
    assert labels(page) == [slow, "Concrete blamed", "Dam failed", "Valley flooded"]
    page.select_option(".sort", "uid")
    assert labels(page) == ["Concrete blamed", "Dam failed", "Valley flooded", slow]
    page.select_option(".sort", "position")  # reference A first, by offset
    assert labels(page) == ["Dam failed", "Valley flooded", "Concrete blamed", slow]
    assert page.locator(".tier").count() == 0

    page.click("button.fold-all")  # collapse / expand
    assert page.locator(".contributors").count() == 0 and page.text_content("button.fold-all") == "Expand"
    dam = page.locator(".scu", has_text="Dam failed")
    dam.locator(".fold").click()
    assert dam.locator(".contrib").count() == 3 and page.locator(".contributors").count() == 1
    page.click("button.fold-all")
    assert page.locator(".contributors").count() == 4

    dam.locator(".label").click()  # step through the contributors in text order
    shown = []
    for _ in range(4):
        page.keyboard.press(">")
        shown.append(
            page.evaluate(
                "() => [...document.querySelectorAll('.ref-text .seg.hl-contrib')].map((s) => s.textContent).join('')"
            )
        )
    assert shown == ["dam burst at night", "the dam had failed", "大坝在夜间决堤", "dam burst at night"]
    assert page.text_content(".step-text") == "contributor 1 of 3"
    page.keyboard.press("<")
    assert page.text_content(".step-text") == "contributor 3 of 3"
    page.click("[data-step='-1']")
    assert page.text_content(".step-text") == "contributor 2 of 3"
    page.screenshot(path=str(artifacts / "builder-step-contributors.png"))

    page.keyboard.press("/")  # find: plain text over labels and texts
    page.keyboard.type("山谷")
    assert labels(page) == ["Valley flooded"] and page.text_content(".counts") == "1 of 4 SCUs"
    page.fill(".filter", "")
    page.check(".regex")
    page.fill(".filter", r"^(dam|valley)\b")  # a regular expression, case-insensitive
    page.wait_for_function("() => document.querySelectorAll('.scu:not([hidden])').length === 2")
    assert labels(page) == ["Dam failed", "Valley flooded"]
    page.fill(".filter", "burst|决堤")
    page.wait_for_function("() => document.querySelectorAll('.scu:not([hidden])').length === 1")
    assert labels(page) == ["Dam failed"]
    page.fill(".filter", "(dam")
    error = page.wait_for_selector(".find-error:not([hidden])")
    assert error.text_content().startswith("Not a valid regular expression")
    page.fill(".filter", "^(a+)+$")  # catastrophic backtracking on the long label
    error = page.wait_for_selector(".find-error:not([hidden]) >> text=/took longer/", timeout=5000)
    page.screenshot(path=str(artifacts / "builder-find-too-slow.png"))
    assert page.evaluate("() => 1 + 1") == 2  # the page never froze
    page.fill(".filter", "a{5}!$")
    page.wait_for_function("() => document.querySelectorAll('.scu:not([hidden])').length === 1")
    assert labels(page) == [slow] and page.is_hidden(".find-error")
    assert re.search(r"\d of 4 SCUs", page.text_content(".counts"))


def test_a_create_whose_answer_was_lost_is_not_made_twice_on_retry(builder, artifacts):  # noqa: F811  (the imported fixture)
    """Issue 24: the server committed the SCU but the answer was a 500 (the connection was cut);
    Retry sends the action again with the same Idempotency-Key and gets the first answer."""
    page, user, topic, context = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    keys = []

    def committed_then_500(route):
        keys.append(route.request.headers.get("idempotency-key"))
        if len(keys) == 1:
            route.fetch()  # the server does it (and commits) ...
            route.fulfill(
                status=500, content_type="application/json", body='{"detail": "Server error."}'
            )  # ... the answer is lost
        else:
            route.continue_()

    page.route(re.compile(r".*/api/scus/$"), committed_then_500)
    program_select(page, ref(page, "A"), "Engineers blamed the old concrete")
    page.keyboard.press("n")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('.save-status').dataset.status === 'failed'")
    assert SCU.objects.filter(pyramid=pyramid).count() == 1  # committed, though the page was told 500
    page.click(".retry")
    wait_saved(page)
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]
    assert SCU.objects.filter(pyramid=pyramid).count() == 1
    assert labels(page) == ["Engineers blamed the old concrete"]
    page.screenshot(path=str(artifacts / "builder-retry-after-lost-answer.png"))

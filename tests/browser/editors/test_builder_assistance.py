"""The assisted builder in Chromium with real keys (issue 30 §2): the proposed contributors of a new
SCU, ranked and painted in the texts, accepted one by one (a digit key), rejected (R), or all at
once (Shift+Y: one undo step takes them back); proposed SCUs for uncovered text (U, then Y); a
dataset that builds unassisted shows and asks for nothing. And two slips of the builder (§2 of the
construction bench's findings): N selects the new contributor, and a click right after N is not lost.

The proposals engine is replaceable: only the obvious case is relied on (a reference holding the
contributor's very sentence gets that sentence proposed)."""

import re

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment, Dataset, ReferenceSummary, Topic
from annotation.history.models import Change
from annotation.pyramids.models import SCU, Contributor, Pyramid

from tests.browser.editors.browser import (
    PASSWORD,
    drag_select,
    open_builder_page,
    status,
    wait_saved,
    wait_status,
)
from tests.browser.editors.test_builder import builder, ref, spans  # noqa: F401 (the fixture)
from tests.browser.editors.test_builder_rough_edges import new_scu

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DAM = "The old dam burst at night"
TEXTS = {
    "A": f"{DAM}. Engineers blamed the concrete.",
    "B": f"Rain fell for days. {DAM}. The valley flooded.",
    "C": f"Nobody was hurt. {DAM}.",
    "D": f"{DAM}! Officials praised the rescue teams.",
    "E": f"Officials said so. {DAM}.",
}


def open_builder(chromium, live_server, assisted=True):
    user = User.objects.create_user("expert", password=PASSWORD)
    dataset = Dataset.objects.create(name="Assisted", assisted_building=assisted)
    topic = Topic.objects.create(dataset=dataset, external_id="T1", title="A dam bursts")
    for rid, text in TEXTS.items():
        ReferenceSummary.objects.create(topic=topic, external_id=rid, text=text)
    Assignment.objects.create(topic=topic, annotator=user, task="build_pyramid")
    page, context = open_builder_page(chromium, live_server, user, {"width": 1400, "height": 900})
    return page, user, context


@pytest.fixture
def assisted(chromium, live_server):
    page, user, context = open_builder(chromium, live_server)
    yield page, user
    context.close()


def proposals(page):
    """The proposals listed, in their order: (reference, text)."""
    listed = page.evaluate(
        "() => [...document.querySelectorAll('.proposals:not([hidden]) .proposal')].map((p) => "
        "[p.querySelector('.ref-tag').textContent, p.querySelector('.proposal-text').textContent])"
    )
    return [(reference, words(text)) for reference, text in listed]


def words(text: str) -> str:
    """A proposal's text without the punctuation an engine may keep around a sentence."""
    return re.sub(r"^\W+|\W+$", "", text)


def stored(pyramid):
    return sorted(
        (c.reference.external_id, words(c.reference.text[c.parts.get().start : c.parts.get().end]), c.proposed)
        for c in Contributor.objects.filter(scu__pyramid=pyramid)
    )


def test_proposed_contributors_accepted_one_by_one_rejected_and_all_at_once(assisted, artifacts):
    page, user = assisted
    drag_select(page, ref(page, "A"), DAM)
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Enter")  # keeps the label
    page.wait_for_selector(".proposals:not([hidden]) .proposal")
    shown = proposals(page)
    assert {("B", DAM), ("C", DAM), ("D", DAM), ("E", DAM)} <= set(shown)
    assert "A" not in [r for r, _ in shown], "A contributes already"
    ringed = page.text_content(".proposal.current .proposal-text")
    painted = page.evaluate(
        "() => [...document.querySelectorAll('.ref-text .seg.proposed-current')].map((s) => s.textContent).join('')"
    )
    assert painted == ringed, "the ringed proposal is painted in its reference's text"  # (both as shown, unstripped)
    assert page.locator(".ref-text .seg.proposed").count() >= len(shown)
    page.screenshot(path=str(artifacts / "builder-proposals.png"))
    pyramid = Pyramid.objects.get(creator=user)

    page.keyboard.press(str(shown.index(("B", DAM)) + 1))  # the proposal's number accepts it
    said = wait_status(page, "^Accepted the proposed contributor")
    assert re.match(f"Accepted the proposed contributor “{DAM}\\W?” \\(reference B\\) into SCU 1", said), said
    wait_saved(page)
    assert stored(pyramid) == [("A", DAM, False), ("B", DAM, True)]
    assert ("B", DAM) not in proposals(page)

    rest = proposals(page)
    rejected = rest[0]  # R rejects the ringed one: the first
    page.keyboard.press("r")
    assert wait_status(page, "^Rejected").startswith(f"Rejected the proposed contributor “{rejected[1]}")
    assert proposals(page) == rest[1:]
    wait_saved(page)
    assert stored(pyramid) == [("A", DAM, False), ("B", DAM, True)], "a rejection adds nothing"

    remaining = proposals(page)
    changes = Change.objects.filter(pyramid=pyramid).count()
    page.keyboard.press("Shift+Y")  # every one still shown, in one action
    said = wait_status(page, "^Accepted \\d+ proposed contributor")
    assert said.endswith("Ctrl+Z takes it back." if len(remaining) == 1 else "Ctrl+Z takes them all back in one step.")
    wait_saved(page)
    assert Change.objects.filter(pyramid=pyramid).count() == changes + 1
    accepted = {r for r, _ in remaining}
    assert {r for r, _, proposed in stored(pyramid) if proposed} == accepted | {"B"}
    assert page.locator(".proposals .proposal").count() == 0
    page.screenshot(path=str(artifacts / "builder-proposals-all-accepted.png"))

    page.keyboard.press("Control+z")  # one undo takes every one of them back, and only them
    assert wait_status(page, "^Undone: Accepted")
    wait_saved(page)
    assert stored(pyramid) == [("A", DAM, False), ("B", DAM, True)]
    page.wait_for_function("() => !document.querySelector('#builder').dataset.proposing")
    assert set(remaining) <= set(proposals(page)), "what the undo took back is proposed again"


def test_proposed_scus_for_uncovered_text(assisted, artifacts):
    page, user = assisted
    page.keyboard.press("u")
    wait_status(page, "proposed SCU|No proposed SCUs")
    items = page.locator(".proposals .proposal")
    assert items.count() >= 1, "the same sentence in four references is proposed"
    label = page.text_content(".proposal.current .proposal-label")
    page.screenshot(path=str(artifacts / "builder-proposed-scus.png"))
    page.keyboard.press("y")  # accepted: a new SCU, its label open for editing
    page.wait_for_selector(".label-edit")
    assert page.input_value(".label-edit") == label
    page.keyboard.press("Control+a")
    page.keyboard.type("The dam burst")
    page.keyboard.press("Enter")
    wait_saved(page)
    scu = SCU.objects.get(pyramid__creator=user)
    assert (scu.label, scu.proposed) == ("The dam burst", True)
    assert scu.contributors.count() >= 2 and all(c.proposed for c in scu.contributors.all())


def test_unassisted_dataset_proposes_nothing(chromium, live_server):
    page, user, context = open_builder(chromium, live_server, assisted=False)
    asked = []
    page.on("request", lambda request: asked.append(request.url) if "proposals" in request.url else None)
    assert page.locator(".proposals").count() == 0 and page.locator("[data-action=propose-scus]").count() == 0
    drag_select(page, ref(page, "A"), DAM)
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Enter")
    wait_saved(page)
    page.keyboard.press("y")
    assert "Assistance is off" in wait_status(page, "Assistance is off")
    page.keyboard.press("u")
    assert "Assistance is off" in status(page)
    wait_saved(page)
    assert asked == []
    assert list(Contributor.objects.filter(scu__pyramid__creator=user).values_list("proposed", flat=True)) == [False]
    context.close()


# ---------------------------------------------------------------------------- slips after N


def test_n_selects_the_new_contributor_so_shift_select_adds_a_part_at_once(builder):  # noqa: F811  (the imported fixture)
    """The construction bench pressed Enter and "." after N before each discontinuous first
    contributor (314 actions): N now selects the contributor it makes, as A does."""
    page, user, topic, _ = builder
    drag_select(page, ref(page, "A"), "dam burst at night")
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    assert page.locator(".contrib.selected").count() == 1, "the new contributor is selected"
    drag_select(page, ref(page, "A"), "valley flooded", shift=True)  # no Enter, no click first
    wait_saved(page)
    scu = SCU.objects.get(pyramid__creator=user)
    assert spans(scu) == {"A": ["dam burst at night", "valley flooded"]}
    assert scu.label == "dam burst at night", "the label field closed with its label"
    assert "as a part of the contributor" in status(page)


def test_a_click_right_after_n_is_not_lost(builder, artifacts):  # noqa: F811  (the imported fixture)
    """Right after N the label field has the focus; the press on the list blurs it, and its save
    used to repaint the list under the pointer, so the click landed on nothing."""
    page, user, topic, _ = builder
    new_scu(page, "A", "dam burst at night", "The dam burst")
    first = SCU.objects.get(pyramid__creator=user)
    drag_select(page, ref(page, "B"), "the dam had failed")
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.click(".scu.selected input[type=checkbox]")  # check the new SCU for merging, the label field still open
    assert page.locator(".scu.checked").count() == 1, "the click checked the new SCU"
    page.click(f'.scu[data-id="{first.pk}"] .weight')
    assert page.get_attribute(".scu.selected", "data-id") == str(first.pk)
    page.keyboard.press("m")
    said = wait_status(page, "^Merged")
    assert re.match(r"Merged (SCU 2|the new SCU) “the dam had failed” into SCU 1 “The dam burst”", said)
    wait_saved(page)
    assert list(SCU.objects.filter(pyramid__creator=user).values_list("uid", flat=True)) == [1]
    assert spans(SCU.objects.get(pk=first.pk)) == {"A": ["dam burst at night"], "B": ["the dam had failed"]}

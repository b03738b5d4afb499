"""Quick building in the pyramid builder, in Debian's Chromium with real keys and mouse drags
(issue 30: the construction bench's actions): with Q on, a drag makes a new SCU at once, a
Ctrl+drag adds a contributor to the selected SCU and a Shift+drag a part, so an SCU costs one
gesture per part; the mode is remembered in the browser, and off, a drag only selects text."""

import pytest

from annotation.pyramids.models import SCU, Pyramid

from tests.browser.editors.browser import drag_select, wait_saved
from tests.browser.editors.test_builder import builder, ref, spans  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def status(page):
    return page.text_content("#builder .last-action")


def test_quick_building_makes_an_scu_per_drag_and_ctrl_drag_adds_to_it(builder):  # noqa: F811
    page, user, topic, _ = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    quick = page.locator("[data-action=quick]")
    assert quick.get_attribute("aria-pressed") == "false"
    page.keyboard.press("q")
    assert quick.get_attribute("aria-pressed") == "true"
    assert status(page).startswith("Quick building on")

    drag_select(page, ref(page, "A"), "dam burst at night")  # a new SCU, with no key
    assert page.locator(".label-edit").count() == 0  # its label is the text: the next key is the builder's
    assert status(page).startswith("New SCU “dam burst at night” from reference A.")
    drag_select(page, ref(page, "A"), "Engineers blamed", shift=True)  # a part of its contributor
    drag_select(page, ref(page, "B"), "the dam had failed", modifier="Control")  # a contributor of it
    assert status(page).startswith("Added “the dam had failed” (reference B)")
    drag_select(page, ref(page, "C"), "山谷被淹")  # the next SCU
    wait_saved(page)

    first, second = SCU.objects.filter(pyramid=pyramid).order_by("uid")
    assert (first.label, spans(first)) == (
        "dam burst at night",
        {"A": ["dam burst at night", "Engineers blamed"], "B": ["the dam had failed"]},
    )
    assert (second.label, spans(second)) == ("山谷被淹", {"C": ["山谷被淹"]})
    assert page.locator(".scu").count() == 2

    page.keyboard.press("e")  # no label field was left open: E relabels the selected SCU
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Escape")

    page.reload()  # remembered in this browser
    wait_saved(page)
    assert page.get_attribute("[data-action=quick]", "aria-pressed") == "true"
    page.keyboard.press("q")
    assert page.get_attribute("[data-action=quick]", "aria-pressed") == "false"
    drag_select(page, ref(page, "D"), "הסכר קרס")  # off: the drag only selects
    wait_saved(page)
    assert SCU.objects.filter(pyramid=pyramid).count() == 2
    assert page.locator(".ref-text .seg.pending").count() > 0


def test_ctrl_drag_says_why_it_added_nothing_without_a_selected_scu(builder):  # noqa: F811
    page, user, topic, _ = builder
    drag_select(page, ref(page, "B"), "the dam had failed", modifier="Control")
    assert status(page).startswith("Ctrl+select adds the text to the selected SCU, and none is selected")
    page.keyboard.press("n")  # the text stays selected: N makes an SCU of it
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Enter")
    wait_saved(page)
    scu = SCU.objects.get(pyramid__topic=topic, pyramid__creator=user)
    assert spans(scu) == {"B": ["the dam had failed"]}
    drag_select(page, ref(page, "A"), "dam burst at night", modifier="Control")  # the SCU N made is selected
    wait_saved(page)
    assert spans(scu) == {"B": ["the dam had failed"], "A": ["dam burst at night"]}


def test_w_puts_the_texts_side_by_side_and_hides_the_scu_list(builder):  # noqa: F811
    page, user, topic, _ = builder
    tops = "() => [...document.querySelectorAll('.ref')].map((r) => Math.round(r.getBoundingClientRect().top))"
    assert len(set(page.evaluate(tops))) > 1  # two columns beside the SCU list: two rows of references
    assert page.is_visible(".scu-panel")
    page.keyboard.press("w")
    assert page.get_attribute("[data-action=wide]", "aria-pressed") == "true"
    assert len(set(page.evaluate(tops))) == 1  # the four side by side, in one row
    assert not page.is_visible(".scu-panel")
    page.keyboard.press("q")  # and the building goes on, the status line saying what each drag did
    drag_select(page, ref(page, "D"), "הסכר קרס")
    assert status(page).startswith("New SCU “הסכר קרס” from reference D.")
    wait_saved(page)
    assert spans(SCU.objects.get(pyramid__topic=topic, pyramid__creator=user)) == {"D": ["הסכר קרס"]}
    page.reload()  # remembered in this browser
    wait_saved(page)
    assert len(set(page.evaluate(tops))) == 1
    page.keyboard.press("w")
    assert page.is_visible(".scu-panel") and page.get_attribute("[data-action=wide]", "aria-pressed") == "false"

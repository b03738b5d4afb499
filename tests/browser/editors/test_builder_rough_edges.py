"""Rough edges of the pyramid builder, with real keys, clicks and drags in Chromium: the contributor
A adds is selected (so Shift+select extends it), a key that does nothing says why in the status
line, the stepper counts contributors when none is selected, the comment mark needs no emoji font,
a contributor dragged onto another SCU moves there, and the text size is remembered."""

import pytest

from annotation.pyramids.models import SCU, Contributor, Pyramid

from tests.browser.editors.browser import drag_select, status, wait_saved
from tests.browser.editors.test_builder import builder, ref, spans  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def new_scu(page, rid, phrase, label):
    drag_select(page, ref(page, rid), phrase)
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Control+a")
    page.keyboard.type(label)
    page.keyboard.press("Enter")
    wait_saved(page)


def test_the_added_contributor_is_selected_and_shift_select_extends_it(builder, artifacts):  # noqa: F811  (the imported fixture)
    page, user, topic, _ = builder
    new_scu(page, "A", "dam burst at night", "The dam burst")
    scu = SCU.objects.get(pyramid__creator=user)
    drag_select(page, ref(page, "B"), "the dam had failed")
    page.keyboard.press("a")
    wait_saved(page)
    added = Contributor.objects.get(scu=scu, reference__external_id="B")
    assert page.get_attribute(".contrib.selected", "data-id") == str(added.pk)
    assert "it is selected" in status(page)
    assert page.text_content(".step-text") == "contributor 2 of 2"
    drag_select(page, ref(page, "B"), "Café owners", shift=True)  # a second part of the new contributor
    wait_saved(page)
    assert spans(scu)["B"] == ["Café owners", "the dam had failed"]
    page.screenshot(path=str(artifacts / "builder-added-contributor-selected.png"))


def test_keys_that_do_nothing_say_why(builder, artifacts):  # noqa: F811  (the imported fixture)
    page, user, topic, _ = builder
    said = {}
    for key in ("e", "x", "o", "Delete", "j", "<", "a", "s", "c", ";"):  # nothing selected, no SCU yet
        page.keyboard.press(key)
        said[key] = status(page)
        assert said[key], f"{key} did nothing and said nothing"
    assert "Select an SCU" in said["e"] and "No SCUs yet" in said["j"] and "Select some text" in said["a"]
    assert page.locator(".banner:not([hidden])").count() == 0, "a missing selection is not an error"
    new_scu(page, "A", "dam burst at night", "The dam burst")
    assert status(page).startswith("Relabelled"), "an action says what it did, not the last explanation"
    page.keyboard.press("Escape")  # N selected its contributor: Esc clears it, the SCU stays selected
    drag_select(page, ref(page, "B"), "the dam had failed", shift=True)  # Shift+select, no contributor selected
    assert "none is selected" in status(page)
    page.screenshot(path=str(artifacts / "builder-status-line.png"))
    page.keyboard.press("Escape")
    for _ in range(2):  # the relabelling, then the SCU: none left
        page.keyboard.press("Control+z")
        wait_saved(page)
    assert page.locator(".scu").count() == 0
    page.keyboard.press("e")
    assert "Select an SCU" in status(page)
    page.keyboard.press("Control+Shift+z")  # the SCU is back
    wait_saved(page)
    page.reload()  # nothing selected
    wait_saved(page)
    page.keyboard.press("o")
    assert "Select an SCU" in status(page)
    page.keyboard.press("j")  # now one is: the reason no longer holds
    assert page.locator(".scu.selected").count() == 1 and status(page) == ""


def test_the_stepper_counts_contributors_when_none_is_selected(builder):  # noqa: F811  (the imported fixture)
    page, user, topic, _ = builder
    assert page.text_content(".step-text") == "no SCU selected"
    new_scu(page, "A", "dam burst at night", "The dam burst")
    scu = SCU.objects.get(pyramid__creator=user)
    drag_select(page, ref(page, "B"), "the dam had failed")
    page.keyboard.press("a")
    wait_saved(page)
    page.keyboard.press("Escape")
    page.click(f'.scu[data-id="{scu.pk}"] .weight')  # the SCU, not one of its contributors
    assert page.text_content(".step-text") == "2 contributors"
    page.keyboard.press(">")
    assert page.text_content(".step-text") == "contributor 1 of 2"


def test_the_comment_mark_is_drawn_and_named(builder, artifacts):  # noqa: F811  (the imported fixture)
    page, user, topic, _ = builder
    new_scu(page, "A", "dam burst at night", "The dam burst")
    page.keyboard.press(";")
    page.wait_for_selector(".comment-edit")
    page.keyboard.type("Check the date")
    page.keyboard.press("Enter")
    wait_saved(page)
    mark = page.locator(".scu .has-comment")
    assert mark.get_attribute("aria-label") == "Comment: Check the date" and mark.get_attribute("role") == "img"
    assert mark.text_content() == "", "no emoji: the mark must not depend on a font"
    size = mark.bounding_box()
    assert size["width"] >= 8 and size["height"] >= 6
    page.locator(".scu-panel").screenshot(path=str(artifacts / "builder-comment-mark.png"))


def test_drag_a_contributor_onto_another_scu_moves_it(builder, artifacts):  # noqa: F811  (the imported fixture)
    page, user, topic, _ = builder
    new_scu(page, "A", "dam burst at night", "The dam burst")
    new_scu(page, "A", "Engineers blamed the old concrete", "Concrete blamed")
    pyramid = Pyramid.objects.get(creator=user)
    dam, concrete = SCU.objects.get(pyramid=pyramid, uid=1), SCU.objects.get(pyramid=pyramid, uid=2)
    drag_select(page, ref(page, "B"), "the dam had failed")
    page.click(f'.scu[data-id="{concrete.pk}"] .label')  # added to the wrong SCU
    page.keyboard.press("a")
    wait_saved(page)
    moved = Contributor.objects.get(reference__external_id="B")
    assert moved.scu == concrete
    source = page.locator(f'.contrib[data-id="{moved.pk}"]').bounding_box()
    target = page.locator(f'.scu[data-id="{dam.pk}"] .label').bounding_box()
    page.mouse.move(source["x"] + 10, source["y"] + source["height"] / 2)
    page.mouse.down()
    page.mouse.move(source["x"] + 20, source["y"] + source["height"] / 2, steps=3)
    page.mouse.move(target["x"] + 20, target["y"] + target["height"] / 2, steps=8)
    page.mouse.up()
    wait_saved(page)
    moved.refresh_from_db()
    assert moved.scu == dam
    assert spans(dam) == {"A": ["dam burst at night"], "B": ["the dam had failed"]}
    assert "Moved the contributor from reference B" in status(page)


def test_the_text_size_is_remembered_in_this_browser(builder, live_server, artifacts):  # noqa: F811  (the imported fixture)
    page, user, topic, context = builder
    size = lambda: page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.ref-text')).fontSize)")  # noqa: E731  (a one-line helper of this test)
    normal = size()
    page.click(".text-size select")
    page.keyboard.press("ArrowDown")  # normal -> large
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#builder').dataset.textSize === 'large'")
    assert size() > normal * 1.1
    page.screenshot(path=str(artifacts / "builder-text-large.png"))
    page.reload()
    wait_saved(page)
    assert page.input_value(".text-size select") == "large" and size() > normal * 1.1

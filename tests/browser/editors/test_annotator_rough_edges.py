"""Rough edges of the peer annotator, driven with real keys and clicks in Chromium: "/" focuses the
SCU filter without typing itself in, the status line keeps its place (no layout shift), the
filter's hint is readable whole, and the references' stepper text never overlaps its buttons."""

import pytest

from annotation.peers.models import PeerMatch

from tests.browser.editors.browser import drag_select, wait_saved
from tests.browser.editors.test_annotator import annotator  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def box(page, selector):
    return page.locator(selector).first.bounding_box()


def test_slash_type_enter_matches_in_every_state(annotator, artifacts):  # noqa: F811  (the imported fixture)
    page, annotation, dam, valley = annotator
    # 1. The selection leaves the focus out of the filter: "/" focuses it, and is not typed into it.
    drag_select(page, ".peer-text", "old dam failed at night")
    assert not page.evaluate("() => document.activeElement.classList.contains('filter')")
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.classList.contains('filter')")
    assert page.input_value(".filter") == ""
    page.keyboard.type("dam failed")
    page.keyboard.press("Enter")
    wait_saved(page)
    assert PeerMatch.objects.filter(annotation=annotation, scu=dam).count() == 1

    # 2. The filter holds old text and has the focus: "/" selects it, what is typed replaces it.
    drag_select(page, ".peer-text", "valley was flooded")
    page.keyboard.press("/")
    page.keyboard.type("zzz")
    page.keyboard.press("/")
    page.keyboard.type("valley")
    assert page.input_value(".filter") == "valley"
    page.keyboard.press("Enter")
    wait_saved(page)
    assert PeerMatch.objects.filter(annotation=annotation, scu=valley).count() == 1

    # 3. The focus is elsewhere (the list): "/" focuses the filter, nothing typed into it.
    drag_select(page, ".peer-text", "Nobody was hurt")
    page.keyboard.press("/")
    page.keyboard.type("old text")
    page.click(".scu-list", position={"x": 5, "y": 300})  # the list's empty space: focus leaves the filter
    assert not page.evaluate("() => document.activeElement.classList.contains('filter')")
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.classList.contains('filter')")
    page.keyboard.type("the dam")
    assert page.input_value(".filter") == "the dam"
    page.keyboard.press("Enter")
    wait_saved(page)
    assert PeerMatch.objects.filter(annotation=annotation, scu=dam).count() == 2


def test_the_first_action_moves_nothing_on_the_page(annotator, artifacts):  # noqa: F811  (the imported fixture)
    page, annotation, dam, valley = annotator
    watched = [
        ".toolbar [data-action=done]",
        ".toolbar [data-action=match]",
        ".annotator-body",
        ".peer-text",
        ".filter",
        ".scu-list",
    ]
    before = [box(page, s) for s in watched]
    assert page.text_content(".last-action") == ""
    drag_select(page, ".peer-text", "old dam failed at night")
    page.click(f'.scu[data-id="{dam.pk}"]')
    wait_saved(page)
    assert page.text_content(".last-action").startswith("Matched")
    page.screenshot(path=str(artifacts / "annotator-after-first-action.png"))
    after = [box(page, s) for s in watched]
    for selector, a, b in zip(watched, before, after, strict=True):
        assert (a["x"], a["y"], a["width"]) == (b["x"], b["y"], b["width"]), f"{selector} moved: {a} -> {b}"


@pytest.mark.parametrize("width", [1280, 1100, 900])
def test_filter_hint_and_stepper_are_readable(annotator, artifacts, width):  # noqa: F811  (the imported fixture)
    page, annotation, dam, valley = annotator
    page.set_viewport_size({"width": width, "height": 800})
    # The placeholder fits in the field: its text is not wider than the field's content box.
    fits = page.evaluate("""() => {
        const input = document.querySelector('.filter');
        const style = getComputedStyle(input);
        const probe = document.createElement('span');
        probe.style.font = style.font; probe.style.whiteSpace = 'pre'; probe.style.position = 'absolute';
        probe.textContent = input.placeholder;
        document.body.append(probe);
        const text = probe.getBoundingClientRect().width;
        probe.remove();
        const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return [text, room];
    }""")
    assert fits[0] <= fits[1], f"placeholder {fits[0]}px in a {fits[1]}px field"
    page.click(f'.scu[data-id="{dam.pk}"]')  # an SCU with 3 contributors: the longest stepper text
    page.keyboard.press("]")
    assert "2 of 3" in page.text_content(".refs-pane .step-text")
    page.screenshot(path=str(artifacts / f"annotator-stepper-{width}.png"))
    text = box(page, ".refs-pane .step-text")
    buttons = [box(page, f".refs-pane [data-step='{s}']") for s in (-1, 1)]
    heading = box(page, ".refs-head h2")
    pane = box(page, ".refs-pane")
    assert buttons[1]["x"] + buttons[1]["width"] <= min(pane["x"] + pane["width"], width), "the stepper is cut off"
    for other in [*buttons, heading]:
        apart = (
            text["x"] + text["width"] <= other["x"] + 0.5
            or other["x"] + other["width"] <= text["x"] + 0.5
            or text["y"] + text["height"] <= other["y"] + 0.5
            or other["y"] + other["height"] <= text["y"] + 0.5
        )
        assert apart, f"the stepper text {text} overlaps {other}"


def test_the_text_size_control_scales_the_texts_and_is_remembered(annotator, artifacts):  # noqa: F811  (the imported fixture)
    page, annotation, dam, valley = annotator
    sizes = lambda: page.evaluate("""() => ['.peer-text', '.refs-pane .ref-text', '.scu .label']
        .map((s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize))""")  # noqa: E731  (a one-line helper of this test)
    normal = sizes()
    page.click(".text-size select")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # normal -> large -> larger
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#annotator').dataset.textSize === 'larger'")
    assert all(b > a * 1.25 for a, b in zip(normal, sizes(), strict=True)), (normal, sizes())
    page.keyboard.press("j")  # the editor's keys work again at once
    assert page.locator(".scu.selected").count() == 1
    page.screenshot(path=str(artifacts / "annotator-text-larger.png"))
    page.reload()
    wait_saved(page)
    assert page.input_value(".text-size select") == "larger"
    assert all(b > a * 1.25 for a, b in zip(normal, sizes(), strict=True))

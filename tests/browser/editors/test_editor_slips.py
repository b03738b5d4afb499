"""Slips that cost a new user time or work, each replayed with real keys and mouse in Chromium: the
annotator's keys act right after a mouse selection (it no longer sends them into the SCU filter);
the builder's Esc clears the selected contributor, then the SCU, so a later Del removes nothing
unseen; every action says in the status line what it did (a removal with "Ctrl+Z to undo"); keys
typed in one burst after N go into the new SCU's label while the server's answer is held back."""

import re

import pytest

from annotation.peers.models import PeerMatch
from annotation.pyramids.models import SCU, Contributor, Pyramid

from tests.browser.editors.browser import drag_select, status, wait_saved, wait_status
from tests.browser.editors.test_annotator import annotator  # noqa: F401 (the fixture)
from tests.browser.editors.test_builder import builder, ref  # noqa: F401 (the fixture)
from tests.browser.editors.test_builder_rough_edges import new_scu

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def focused_class(page):
    return page.evaluate("() => document.activeElement.className")


# ---------------------------------------------------------------------------- the annotator


def test_annotator_keys_act_right_after_a_mouse_selection(annotator, artifacts):  # noqa: F811  (the imported fixture)
    page, annotation, dam, valley = annotator
    drag_select(page, ".peer-text", "Nobody was hurt")
    assert "filter" not in focused_class(page), "the selection must leave the focus out of the filter"
    page.keyboard.press("u")  # U: content in no SCU, at once
    wait_saved(page)
    assert [[p.start for p in m.parts.all()] for m in PeerMatch.objects.filter(annotation=annotation, scu=None)] == [
        [annotation.peer.text.index("Nobody was hurt")]
    ]
    assert page.input_value(".filter") == ""
    assert "Marked “Nobody was hurt” as content in no SCU" in status(page)

    drag_select(page, ".peer-text", "valley was flooded")  # J/K walk the list, Enter matches
    order = page.evaluate("() => [...document.querySelectorAll('.scu-list .scu')].map((s) => Number(s.dataset.id))")
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert page.get_attribute(".scu.selected", "data-id") == str(order[1]) == str(valley.pk)
    page.keyboard.press("k")
    assert page.get_attribute(".scu.selected", "data-id") == str(dam.pk)
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    wait_saved(page)
    wrong = PeerMatch.objects.get(annotation=annotation, scu=valley)

    drag_select(page, ".peer-text", "old dam failed at night")  # / then type: the search (the bench's flow)
    page.keyboard.press("/")
    assert "filter" in focused_class(page)
    page.keyboard.type("dam")
    page.keyboard.press("Enter")
    wait_saved(page)
    assert PeerMatch.objects.filter(annotation=annotation, scu=dam).count() == 1

    page.click(".peer-text .seg.covered >> text=valley was flooded")  # M moves the clicked match to the selected SCU
    page.click(f'.scu[data-id="{dam.pk}"]')
    page.keyboard.press("m")
    wait_saved(page)
    wrong.refresh_from_db()
    assert wrong.scu == dam
    assert "Moved “valley was flooded” to (3) The dam failed at night" in status(page)

    page.click(".peer-text .seg.covered >> text=Nobody was hurt")  # Del removes it, and says how to undo
    page.keyboard.press("Delete")
    wait_saved(page)
    assert not PeerMatch.objects.filter(annotation=annotation, scu=None).exists()
    assert status(page) == "Removed the match of “Nobody was hurt” (no SCU). Ctrl+Z to undo."
    page.screenshot(path=str(artifacts / "annotator-keys-after-selection.png"))

    drag_select(page, ".peer-text", "Nobody was hurt")  # S: Autoannotate (shown again), the selection aside
    page.evaluate("() => { document.querySelector('.last-action').textContent = ''; }")
    page.keyboard.press("s")
    page.wait_for_function(
        "() => /suggestions? shown|^No suggestions/.test(document.querySelector('.last-action').textContent)"
    )
    assert page.input_value(".filter") == ""


# ---------------------------------------------------------------------------- the builder


def add_contributor(page, rid, phrase):
    drag_select(page, ref(page, rid), phrase)
    page.keyboard.press("a")
    wait_saved(page)


def test_builder_esc_clears_the_contributor_then_the_scu_and_del_says_what_it_removed(builder, artifacts):  # noqa: F811  (the imported fixture)
    page, user, topic, _ = builder
    new_scu(page, "A", "dam burst at night", "The dam burst")
    add_contributor(page, "B", "the dam had failed")  # the new contributor is selected
    scu = SCU.objects.get(pyramid__creator=user)
    assert page.locator(".contrib.selected").count() == 1
    page.keyboard.press("Escape")  # first Esc: the contributor
    assert page.locator(".contrib.selected").count() == 0
    assert page.get_attribute(".scu.selected", "data-id") == str(scu.pk)
    assert "the selected contributor" in status(page) and "Esc again" in status(page)
    page.keyboard.press("Escape")  # second Esc: the SCU
    assert page.locator(".scu.selected").count() == 0
    assert page.text_content(".step-text") == "no SCU selected"
    page.keyboard.press("Delete")  # nothing selected: nothing removed
    assert "Nothing to delete" in status(page)
    assert Contributor.objects.filter(scu=scu).count() == 2

    page.click('.contrib:has-text("the dam had failed")')  # Del on a contributor says what it removed
    page.keyboard.press("Delete")
    said = wait_status(page, "Removed the contributor")
    assert (
        said == "Removed the contributor “the dam had failed” (reference B) from SCU 1 “The dam burst”. Ctrl+Z to undo."
    )
    wait_saved(page)
    assert list(Contributor.objects.filter(scu=scu).values_list("reference__external_id", flat=True)) == ["A"]
    page.screenshot(path=str(artifacts / "builder-del-says-what-it-removed.png"))
    page.keyboard.press("Control+z")
    said = wait_status(page, "^Undone")
    assert said.startswith("Undone: Removed the contributor “the dam had failed”")
    wait_saved(page)
    assert sorted(Contributor.objects.filter(scu=scu).values_list("reference__external_id", flat=True)) == ["A", "B"]


def test_builder_every_action_says_what_it_did(builder, artifacts):  # noqa: F811  (the imported fixture)
    page, user, topic, _ = builder
    page.on("dialog", lambda dialog: dialog.accept())  # the SCU deletion asks first
    drag_select(page, ref(page, "A"), "dam burst at night")
    page.keyboard.press("n")
    assert (
        wait_status(page, "^New SCU")
        == "New SCU “dam burst at night” from reference A. Type its label; Enter keeps it."
    )
    page.keyboard.press("Control+a")
    page.keyboard.type("The dam burst")
    page.keyboard.press("Enter")
    wait_saved(page)
    assert re.fullmatch(r"Relabelled (SCU 1|the new SCU) “The dam burst” \(was “dam burst at night”\)\.", status(page))
    new_scu(page, "B", "the dam had failed", "The dam failed")
    pyramid = Pyramid.objects.get(creator=user)
    burst, failed = SCU.objects.get(pyramid=pyramid, uid=1), SCU.objects.get(pyramid=pyramid, uid=2)

    page.click(f'.scu[data-id="{failed.pk}"] .weight')  # relabel with E
    page.keyboard.press("e")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Control+a")
    page.keyboard.type("The dam had failed")
    page.keyboard.press("Enter")
    assert wait_status(page, "^Relabelled") == "Relabelled SCU 2 “The dam had failed” (was “The dam failed”)."
    wait_saved(page)

    page.keyboard.press("x")  # merge with X then M
    page.click(f'.scu[data-id="{burst.pk}"] .weight')
    page.keyboard.press("m")
    said = wait_status(page, "^Merged")
    assert said == "Merged SCU 2 “The dam had failed” into SCU 1 “The dam burst” (1 SCU removed). Ctrl+Z to undo."
    wait_saved(page)
    assert list(SCU.objects.filter(pyramid=pyramid).values_list("uid", flat=True)) == [1]

    page.keyboard.press("Control+z")  # undo names what it undid
    assert wait_status(page, "^Undone") == f"Undone: {said.removesuffix(' Ctrl+Z to undo.')} (Ctrl+Shift+Z redoes it)."
    wait_saved(page)
    assert SCU.objects.filter(pyramid=pyramid).count() == 2
    page.keyboard.press("Control+Shift+z")
    assert wait_status(page, "^Redone").startswith("Redone: Merged SCU 2")
    wait_saved(page)

    page.keyboard.press("Delete")  # the SCU (no contributor selected)
    said = wait_status(page, "^Deleted")
    assert said == "Deleted SCU 1 “The dam burst” and its 2 contributors. Ctrl+Z to undo."
    wait_saved(page)
    assert not SCU.objects.filter(pyramid=pyramid).exists()
    page.screenshot(path=str(artifacts / "builder-status-after-delete.png"))


def drag_to_the_end(page, selector, word):
    """Select from ``word`` to the end of the text with a real drag released past the text's end, in
    the bottom corner of its card (where people end a selection "to the end")."""
    box = page.evaluate(
        """([selector, word]) => {
            const root = document.querySelector(selector);
            const at = root.textContent.indexOf(word);
            const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
            let offset = 0, node = walker.nextNode();
            while (offset + node.data.length <= at) { offset += node.data.length; node = walker.nextNode(); }
            const range = document.createRange();
            range.setStart(node, at - offset);
            range.setEnd(node, at - offset + 1);
            const first = range.getClientRects()[0], card = root.closest('.ref').getBoundingClientRect();
            return {x: first.left + 1, y: first.top + first.height / 2, x2: card.right - 4, y2: card.bottom - 4};
        }""",
        [selector, word],
    )
    page.mouse.move(box["x"], box["y"])
    page.mouse.down()
    page.mouse.move(box["x2"], box["y2"], steps=5)
    page.mouse.up()


def test_builder_keys_typed_while_the_label_opens_go_into_the_label(builder, artifacts):  # noqa: F811  (the imported fixture)
    """A selection dragged to the end of a text, then N and the label in one burst, the server's
    answer to N held back and the CPU slowed down: N makes the SCU and no key of the label is taken
    as a command (S would split the selected contributor, E relabel its SCU, A add a contributor);
    the label is the whole text typed."""
    page, user, topic, context = builder
    new_scu(page, "A", "dam burst at night", "The dam burst")
    add_contributor(page, "B", "the dam had failed")  # a contributor is selected: S would split it
    held = []
    page.route(
        "**/api/scus/", lambda route: held.append(route) if route.request.method == "POST" else route.continue_()
    )
    cdp = context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
    drag_to_the_end(page, ref(page, "A"), "Engineers")
    page.keyboard.press("n")
    page.keyboard.type("Sea walls failed as expected")
    page.keyboard.press("Enter")
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
    assert len(held) == 1, "N sends the new SCU once (held back until now)"
    held[0].continue_()
    wait_saved(page)
    pyramid = Pyramid.objects.get(creator=user)
    assert sorted(SCU.objects.filter(pyramid=pyramid).values_list("label", flat=True)) == [
        "Sea walls failed as expected",
        "The dam burst",
    ]
    parts = sorted(
        (c.scu.label, c.reference.external_id, [p.reference.text[p.start : p.end] for p in c.parts.all()])
        for c in Contributor.objects.filter(scu__pyramid=pyramid)
    )
    assert parts == [
        ("Sea walls failed as expected", "A", ["Engineers blamed the old concrete"]),
        ("The dam burst", "A", ["dam burst at night"]),
        ("The dam burst", "B", ["the dam had failed"]),
    ]
    page.screenshot(path=str(artifacts / "builder-label-typed-in-a-burst.png"))

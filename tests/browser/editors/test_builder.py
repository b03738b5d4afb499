"""The pyramid builder in Debian's Chromium against a live server: mouse-only and keyboard-only
building, merge, discontinuous contributors, undo/redo, the one-per-reference rule, a conflict
between two tabs, Unicode offsets, and a reload showing exactly what was saved."""

import pytest

from annotation.history.models import Change
from annotation.pyramids.models import SCU, Contributor, Pyramid

from tests.browser.editors.browser import (
    REFERENCES,
    boxes,
    drag_select,
    login,
    open_builder_page,
    program_select,
    wait_saved,
    world,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def ref(page, rid):
    """The CSS selector of reference ``rid``'s text (found by its heading, as a person would)."""
    pk = page.evaluate(
        "(rid) => [...document.querySelectorAll('.ref')].find(r => r.querySelector('h2').textContent === "
        "`Reference ${rid}`).dataset.ref",
        rid,
    )
    return f'.ref-text[data-ref="{pk}"]'


def key_to(page, scu_id):
    """Select an SCU with J/K only, as a keyboard user walks the list."""
    order = page.evaluate("() => [...document.querySelectorAll('.scu')].map(s => Number(s.dataset.id))")
    for _ in range(2 * len(order) + 2):
        current = page.evaluate("() => Number(document.querySelector('.scu.selected')?.dataset.id ?? -1)")
        if current == scu_id:
            return
        page.keyboard.press("j" if current == -1 or order.index(current) < order.index(scu_id) else "k")
    raise AssertionError(f"could not reach SCU {scu_id} with the keyboard")


def spans(scu):
    """{reference: [phrase, ...]} of an SCU as Python slices the stored offsets."""
    out = {}
    for c in scu.contributors.all():
        out[c.reference.external_id] = [p.reference.text[p.start : p.end] for p in c.parts.order_by("start")]
    return out


@pytest.fixture
def builder(chromium, live_server, artifacts):
    user, topic = world()
    page, context = open_builder_page(chromium, live_server, user, {"width": 1280, "height": 800})
    yield page, user, topic, context
    context.close()


def test_mouse_only_build_merge_discontinuous_and_rules(builder, artifacts):
    page, user, topic, _ = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    drag_select(page, ref(page, "A"), "dam burst at night")
    page.click("[data-action=new-scu]")
    page.wait_for_selector(".label-edit")
    assert page.input_value(".label-edit") == "dam burst at night"  # prefilled from the selection
    page.fill(".label-edit", "The dam burst at night")
    page.keyboard.press("Enter")
    wait_saved(page)
    scu1 = SCU.objects.get(pyramid=pyramid, uid=1)
    assert scu1.label == "The dam burst at night" and spans(scu1) == {"A": ["dam burst at night"]}

    drag_select(page, ref(page, "B"), "the dam had failed")  # emoji and a combining accent before it
    page.click(f'.scu[data-id="{scu1.pk}"] .label')
    page.click("[data-action=add-contributor]")
    wait_saved(page)
    assert spans(scu1) == {"A": ["dam burst at night"], "B": ["the dam had failed"]}
    assert page.text_content(f'.scu[data-id="{scu1.pk}"] .weight') == "2"

    drag_select(page, ref(page, "A"), "old concrete")  # a second contributor from A: refused
    page.click("[data-action=add-contributor]")
    banner = page.wait_for_selector(".banner:not([hidden])")
    assert "already has a contributor from reference A" in banner.text_content()
    assert page.locator(".seg.pending").count() >= 1, "the user's selection is kept"
    assert scu1.contributors.count() == 2

    contributor_a = scu1.contributors.get(reference__external_id="A")
    page.click(f'.contrib[data-id="{contributor_a.pk}"]')
    drag_select(page, ref(page, "A"), "valley flooded", shift=True)  # shift-select adds a part
    wait_saved(page)
    assert spans(scu1)["A"] == ["dam burst at night", "valley flooded"]

    drag_select(page, ref(page, "C"), "大坝在夜间决堤")
    page.click("[data-action=new-scu]")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Enter")
    wait_saved(page)
    scu2 = SCU.objects.get(pyramid=pyramid, uid=2)
    assert spans(scu2) == {"C": ["大坝在夜间决堤"]}
    page.drag_and_drop(f'.scu[data-id="{scu2.pk}"] .label', f'.scu[data-id="{scu1.pk}"] .label')  # merge by drag
    wait_saved(page)
    assert not SCU.objects.filter(pk=scu2.pk).exists()
    assert set(spans(scu1)) == {"A", "B", "C"} and page.text_content(f'.scu[data-id="{scu1.pk}"] .weight') == "3"
    page.screenshot(path=str(artifacts / "builder-merged.png"))

    page.click("[data-action=undo]")  # undo the merge
    wait_saved(page)
    assert SCU.objects.filter(pyramid=pyramid).count() == 2 and set(spans(SCU.objects.get(pyramid=pyramid, uid=1))) == {
        "A",
        "B",
    }
    page.click("[data-action=redo]")
    wait_saved(page)
    assert SCU.objects.filter(pyramid=pyramid).count() == 1

    page.reload()  # a reload shows exactly what was saved
    wait_saved(page)
    shown = page.evaluate(
        "() => [...document.querySelectorAll('.scu')].map(s => [s.querySelector('.weight').textContent, "
        "s.querySelector('.label').textContent])"
    )
    assert shown == [[str(s.contributors.count()), s.label] for s in SCU.objects.filter(pyramid=pyramid)]
    highlighted = page.evaluate(
        "() => [...document.querySelectorAll('.ref-text .seg.covered')].map(s => s.textContent).join('|')"
    )
    for phrase in ["dam burst at night", "valley flooded", "the dam had failed", "大坝在夜间决堤"]:
        assert phrase in highlighted
    page.screenshot(path=str(artifacts / "builder-reloaded.png"))


def test_keyboard_only(builder, artifacts):
    page, user, topic, _ = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    program_select(page, ref(page, "A"), "Engineers blamed the old concrete")
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Control+a")
    page.keyboard.type("Old concrete was blamed")
    page.keyboard.press("Enter")
    wait_saved(page)
    program_select(page, ref(page, "C"), "工程师归咎于旧混凝土")
    page.keyboard.press("j")  # select the (only) SCU
    page.keyboard.press("a")
    wait_saved(page)
    program_select(page, ref(page, "D"), "הסכר קרס בלילה")  # right-to-left text
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Enter")
    wait_saved(page)
    program_select(page, ref(page, "B"), "Café owners")
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Escape")  # keep the prefilled label
    wait_saved(page)
    scus = {s.uid: spans(s) for s in SCU.objects.filter(pyramid=pyramid)}
    assert scus == {
        1: {"A": ["Engineers blamed the old concrete"], "C": ["工程师归咎于旧混凝土"]},
        2: {"D": ["הסכר קרס בלילה"]},
        3: {"B": ["Café owners"]},
    }
    # merge 3 into 2 with the keyboard: select 3, check it (X), select 2, merge (M)
    three, two = SCU.objects.get(pyramid=pyramid, uid=3).pk, SCU.objects.get(pyramid=pyramid, uid=2).pk
    key_to(page, three)
    page.keyboard.press("x")
    key_to(page, two)
    page.keyboard.press("m")
    wait_saved(page)
    assert set(spans(SCU.objects.get(pyramid=pyramid, uid=2))) == {"B", "D"}
    page.keyboard.press("Control+z")
    wait_saved(page)
    assert SCU.objects.filter(pyramid=pyramid).count() == 3
    page.keyboard.press("Control+Shift+z")
    wait_saved(page)
    assert SCU.objects.filter(pyramid=pyramid).count() == 2
    page.keyboard.press("?")
    assert page.is_visible("dialog.help")
    page.screenshot(path=str(artifacts / "builder-help.png"))
    page.keyboard.press("Escape")
    assert Change.objects.filter(pyramid=pyramid, user=user).count() >= 6


def test_conflict_between_two_tabs(builder, live_server, artifacts):
    page, user, topic, context = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    drag_select(page, ref(page, "A"), "dam burst")
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Enter")
    wait_saved(page)
    other = context.new_page()  # the same user in a second tab
    other.goto(page.url)
    wait_saved(other)
    scu = SCU.objects.get(pyramid=pyramid, uid=1)
    other.dblclick(f'.scu[data-id="{scu.pk}"] .label')
    other.fill(".label-edit", "Renamed in the other tab")
    other.keyboard.press("Enter")
    wait_saved(other)
    drag_select(page, ref(page, "B"), "the dam had failed")  # this tab still has the old revision
    page.click(f'.scu[data-id="{scu.pk}"] .label')
    page.click("[data-action=add-contributor]")
    banner = page.wait_for_selector(".banner:not([hidden])")
    assert "changed elsewhere" in banner.text_content() and "Renamed in the other tab" in banner.text_content()
    # the pill shows "saved" again once the current state is loaded (nothing of this tab is pending);
    # the banner says what happened
    page.wait_for_function(
        f"() => document.querySelector('.scu[data-id=\"{scu.pk}\"] .label')?.textContent === 'Renamed in the other tab'"
    )
    assert Contributor.objects.filter(scu=scu).count() == 1, "the stale write was not applied"
    assert (
        page.text_content(f'.scu[data-id="{scu.pk}"] .label') == "Renamed in the other tab"
    )  # shows the current state
    page.screenshot(path=str(artifacts / "builder-conflict.png"))


def test_unicode_offsets_match_python(builder):
    page, user, topic, _ = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    cases = [("B", "Zoe\u0308's street"), ("B", "flood hit"), ("C", "山谷被淹"), ("D", "והעמק הוצף")]
    for rid, phrase in cases:
        drag_select(page, ref(page, rid), phrase)
        page.keyboard.press("n")
        page.wait_for_selector(".label-edit")
        page.keyboard.press("Enter")
        wait_saved(page)
    stored = [list(spans(s).items())[0] for s in SCU.objects.filter(pyramid=pyramid).order_by("uid")]
    assert [(rid, texts[0]) for rid, texts in stored] == [
        (rid, phrase.replace("Zoe\u0308's", "Zoe\u0308's")) for rid, phrase in cases
    ]
    for c in Contributor.objects.filter(scu__pyramid=pyramid):
        for p in c.parts.all():
            assert (
                REFERENCES[c.reference.external_id][p.start : p.end].strip()
                == REFERENCES[c.reference.external_id][p.start : p.end]
            )


def test_comments_offline_edits_and_mark_as_done(builder, live_server, artifacts):
    page, user, topic, context = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    program_select(page, ref(page, "A"), "Engineers blamed the old concrete")
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Enter")
    wait_saved(page)
    scu = SCU.objects.get(pyramid=pyramid, uid=1)
    page.keyboard.press("Escape")  # N selected its contributor: Esc leaves the SCU selected
    page.keyboard.press(";")  # comment the SCU
    page.wait_for_selector(".comment-edit")
    page.keyboard.type("Check the cause with the coordinator")
    page.keyboard.press("Enter")
    wait_saved(page)
    page.click(f'.contrib[data-id="{scu.contributors.get().pk}"]')
    page.keyboard.press(";")  # comment the contributor
    page.wait_for_selector(".comment-edit")
    page.keyboard.type("cause, not effect")
    page.keyboard.press("Enter")
    wait_saved(page)
    scu.refresh_from_db()
    assert (
        scu.comment == "Check the cause with the coordinator" and scu.contributors.get().comment == "cause, not effect"
    )

    layout = boxes(page, ".texts", ".scu-panel", ".toolbar", ".save-status")
    context.set_offline(True)  # the network goes away mid-work
    program_select(page, ref(page, "B"), "Café owners")
    page.keyboard.press("n")
    page.wait_for_function("() => document.querySelector('.save-status').dataset.status === 'offline'")
    assert "not saved yet" in page.text_content(".save-status")
    assert boxes(page, ".texts", ".scu-panel", ".toolbar", ".save-status") == layout, (
        "the status message moved the page"
    )
    page.screenshot(path=str(artifacts / "builder-offline.png"))
    assert SCU.objects.filter(pyramid=pyramid).count() == 1
    context.set_offline(False)  # back: the pending edit is sent
    page.wait_for_selector(".label-edit", timeout=15000)
    page.keyboard.press("Enter")
    wait_saved(page)
    assert SCU.objects.filter(pyramid=pyramid).count() == 2

    page.goto(f"{live_server.url}/")  # the home page: progress, mark as done
    assert "2 SCUs" in page.inner_text("table.assignments")
    page.click("button:has-text('Mark as done')")
    page.wait_for_selector(".messages")
    assert "Done" in page.inner_text("table.assignments")
    pyramid.refresh_from_db()
    assert pyramid.status == Pyramid.Status.DONE


def test_a_selection_across_lines_gives_a_one_line_label(builder):
    page, user, topic, _ = builder
    drag_select(page, ref(page, "A"), "valley flooded.\nEngineers blamed")
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    assert page.input_value(".label-edit") == "valley flooded. Engineers blamed"
    page.keyboard.press("Enter")
    wait_saved(page)
    scu = SCU.objects.get(pyramid__topic=topic, uid=1)
    assert scu.label == "valley flooded. Engineers blamed"
    assert spans(scu) == {"A": ["valley flooded.\nEngineers blamed"]}  # the offsets keep the exact text
    assert not Change.objects.filter(action="update_scu").exists()  # Enter on the prefilled label saves nothing more


def test_clicking_text_of_several_scus_offers_a_chooser(builder):
    page, user, topic, _ = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    for phrase in ["dam burst at night", "burst at night and the valley"]:  # two SCUs overlapping on "burst at night"
        program_select(page, ref(page, "A"), phrase)
        page.keyboard.press("n")
        page.wait_for_selector(".label-edit")
        page.keyboard.press("Enter")
        wait_saved(page)
    page.keyboard.press("Escape")
    page.click(f"{ref(page, 'A')} .seg.covered >> text=burst at night")
    chooser = page.wait_for_selector(".chooser:not([hidden])")
    options = [b.text_content() for b in chooser.query_selector_all("button")]
    assert options == ["(1) dam burst at night", "(1) burst at night and the valley"]
    chooser.query_selector_all("button")[1].click()
    second = SCU.objects.get(pyramid=pyramid, uid=2)
    assert page.get_attribute(".scu.selected", "data-id") == str(second.pk)


def test_shift_select_adds_a_part_even_with_a_caret_left_elsewhere(builder, artifacts):
    """Clicking text leaves a caret; a later Shift+drag used to extend that caret (across the SCU
    list) and silently add nothing."""
    page, user, topic, _ = builder
    pyramid = Pyramid.objects.get(topic=topic, creator=user)
    drag_select(page, ref(page, "A"), "dam burst at night")
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Enter")
    wait_saved(page)
    scu = SCU.objects.get(pyramid=pyramid, uid=1)
    contributor = scu.contributors.get()
    page.click(f"{ref(page, 'B')} >> text=Café owners")  # a caret in another reference
    page.click(f'.contrib[data-id="{contributor.pk}"] .contrib-text')  # and then one in the SCU list
    assert page.evaluate("() => getSelection().isCollapsed && getSelection().rangeCount === 1")
    drag_select(page, ref(page, "A"), "Engineers blamed", shift=True)
    wait_saved(page)
    assert spans(scu)["A"] == ["dam burst at night", "Engineers blamed"]
    assert page.locator(".banner:not([hidden])").count() == 0


def test_a_finished_pyramid_explains_itself_to_a_peer_annotator(chromium, live_server, artifacts):
    from django.contrib.auth.models import User

    from annotation.corpus.models import Assignment, PeerSummary
    from annotation.peers.models import PeerAnnotation

    from tests.browser.editors.browser import PASSWORD

    builder_user, topic = world("builder")
    pyramid = Pyramid.objects.create(topic=topic, creator=builder_user, status=Pyramid.Status.DONE)
    pyramid.references.set(topic.referencesummarys.all())
    annotator = User.objects.create_user("reader", password=PASSWORD)
    Assignment.objects.create(topic=topic, annotator=annotator, task="annotate_peers")
    PeerAnnotation.objects.create(peer=PeerSummary.objects.get(topic=topic), pyramid=pyramid, annotator=annotator)
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    login(page, live_server.url, "reader")
    response = page.goto(f"{live_server.url}/pyramids/{pyramid.pk}/build/")
    assert response.status == 403
    text = page.inner_text("main")
    assert "finished" in text and "read only" in text and "builder, who built it" in text
    assert "0 SCUs from 4 reference summaries" in text
    page.screenshot(path=str(artifacts / "builder-finished-readonly.png"))
    page.click("text=Peer 1")  # the way on: their annotation
    page.wait_for_url("**/annotations/*/")
    page.wait_for_load_state("networkidle")  # its requests end before the test database is flushed
    context.close()

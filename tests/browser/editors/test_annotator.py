"""The peer annotator in Debian's Chromium against a live server: matching with the mouse and the
keyboard, a repetition, a non-matching unit, undo, Unicode offsets, blind annotation, and a score
panel that shows exactly what export_scores gives, computed by a real Celery worker on Redis."""

import json
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotation.corpus.models import Assignment
from annotation.peers import assignments
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid

from tests.browser.editors.browser import (
    PASSWORD,
    PEERS,
    UNTOUCHED_PEER_URL,
    drag_select,
    login,
    program_select,
    wait_saved,
    world,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def build_pyramid(topic, creator):
    """Two SCUs: "the dam failed at night" (A, B, D: weight 3) and "the valley flooded" (A, C: weight 2)."""
    refs = {r.external_id: r for r in topic.referencesummarys.all()}
    pyramid = Pyramid.objects.create(topic=topic, creator=creator, status=Pyramid.Status.DONE)
    pyramid.references.set(refs.values())

    def span(rid, phrase):
        start = refs[rid].text.index(phrase)
        return [(start, start + len(phrase))]

    dam = SCU.objects.create(pyramid=pyramid, uid=1, label="The dam failed at night")
    add_contributor(dam, refs["A"], span("A", "dam burst at night"))
    add_contributor(dam, refs["B"], span("B", "the dam had failed"))
    add_contributor(dam, refs["D"], span("D", "הסכר קרס בלילה"))
    valley = SCU.objects.create(pyramid=pyramid, uid=2, label="The valley flooded")
    add_contributor(valley, refs["A"], span("A", "the valley flooded"))
    add_contributor(valley, refs["C"], span("C", "山谷被淹"))
    return pyramid, dam, valley


@pytest.fixture
def annotator(chromium, live_server):
    user, topic = world("pat", tasks=("annotate_peers",))
    builder = User.objects.create_user("builder")
    pyramid, dam, valley = build_pyramid(topic, builder)
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    annotation = assignments.annotation_for(
        Assignment.objects.get(annotator=user)
    )  # started earlier (untouched peers: test_untouched_peers.py)
    login(page, live_server.url, user.username)
    page.click("button:has-text('Continue')")
    page.wait_for_url(f"**/annotations/{annotation.pk}/")
    wait_saved(page)
    yield page, annotation, dam, valley
    context.close()


def spans(annotation):
    text = annotation.peer.text
    return sorted(
        ((m.scu.uid if m.scu else 0), [text[p.start : p.end] for p in m.parts.all()]) for m in annotation.matches.all()
    )


def export_row(annotation):
    out = StringIO()
    call_command(
        "export_scores", format="json", include_unfinished=True, stdout=out
    )  # the annotation is not marked done
    return next(
        r for r in json.loads(out.getvalue()) if r["kind"] == "peer" and r["annotator"] == annotation.annotator.username
    )


def wait_score(page, timeout=30):
    page.wait_for_selector(".score-state:not(.updating)", timeout=timeout * 1000)
    return {
        dt: dd
        for dt, dd in page.evaluate(
            "() => [...document.querySelectorAll('.score-grid dt')].map(dt => [dt.textContent, "
            "dt.nextElementSibling.textContent])"
        )
    }


def test_mouse_keyboard_repetition_non_matching_undo(annotator, artifacts):
    page, annotation, dam, valley = annotator
    drag_select(page, ".peer-text", "old dam failed at night")  # mouse: select, click the SCU
    page.click(f'.scu[data-id="{dam.pk}"]')
    wait_saved(page)
    program_select(page, ".peer-text", "valley was flooded")  # keyboard: /, type to find the SCU, Enter
    page.keyboard.press("/")
    page.keyboard.type("valley")
    page.keyboard.press("Enter")
    wait_saved(page)
    program_select(page, ".peer-text", "dam failed")  # the same SCU again: a repetition
    page.click(f'.scu[data-id="{dam.pk}"]')
    wait_saved(page)
    program_select(page, ".peer-text", "Nobody was hurt")  # content in no SCU
    page.keyboard.press("u")
    wait_saved(page)
    assert spans(annotation) == sorted(
        [(1, ["old dam failed at night"]), (2, ["valley was flooded"]), (1, ["dam failed"]), (0, ["Nobody was hurt"])]
    )  # 0: no SCU
    assert page.text_content(f'.scu[data-id="{dam.pk}"] .found') == "×2"
    page.screenshot(path=str(artifacts / "annotator-matched.png"))
    page.keyboard.press("Control+z")  # undo the non-matching unit
    wait_saved(page)
    assert PeerMatch.objects.filter(annotation=annotation, scu=None).count() == 0
    page.keyboard.press("Control+Shift+z")
    wait_saved(page)
    assert PeerMatch.objects.filter(annotation=annotation, scu=None).count() == 1
    # clicking a highlighted span selects its match; Delete removes it
    page.click(".peer-text .seg.covered >> text=valley was flooded")
    page.keyboard.press("Delete")
    wait_saved(page)
    assert not PeerMatch.objects.filter(annotation=annotation, scu=valley).exists()
    # the references show the selected SCU's contributors, stepping through them
    page.click(f'.scu[data-id="{dam.pk}"]')
    assert page.text_content(".step-text") == "contributor 1 of 3"
    page.keyboard.press("]")
    assert page.text_content(".step-text") == "contributor 2 of 3"
    assert "the dam had failed" in page.evaluate(
        "() => [...document.querySelectorAll('.refs-pane .seg.hl')].map(s => s.textContent).join('|')"
    )


def test_unicode_offsets(annotator):
    page, annotation, dam, valley = annotator
    drag_select(page, ".peer-text", "night 🎉 and")
    page.keyboard.press("u")
    wait_saved(page)
    match = annotation.matches.get()
    part = match.parts.get()
    assert PEERS["1"][part.start : part.end] == "night 🎉 and"


@pytest.mark.worker
def test_score_panel_shows_what_export_scores_gives(celery_worker, annotator, artifacts):
    page, annotation, dam, valley = annotator
    for phrase, scu in [("old dam failed at night", dam), ("dam failed", dam), ("valley was flooded", valley)]:
        program_select(page, ".peer-text", phrase)
        page.click(f'.scu[data-id="{scu.pk}"]')
        wait_saved(page)
    program_select(page, ".peer-text", "Nobody was hurt")
    page.keyboard.press("u")
    wait_saved(page)
    shown = wait_score(page)
    row = export_row(annotation)
    assert shown["Modified score"] == f"{row['modified']:.4f}" and shown["Original score"] == f"{row['original']:.4f}"
    assert (shown["Matched SCUs"], shown["Repetitions"], shown["Non-matching units"], shown["Observed weight (D)"]) == (
        str(row["matched_scus"]),
        str(row["repetitions"]),
        str(row["non_matching"]),
        str(row["observed_weight"]),
    )
    # Xa = round((3 + 2) / 4) = 1 -> MaxWeight 3; D = 5 -> modified 5/3 (a peer may exceed the average summary)
    assert row["modified"] == pytest.approx(5 / 3)
    # DUCView's figures: weights 3 and 2 over 4 references -> 1.25 SCUs per reference, Xa = 1,
    # MaxWeight(1) = 3; X = 2 SCUs + 1 repetition + 1 unit = 4 -> MaxWeight(4) = 3 + 2 = 5; the dam SCU twice.
    assert (shown["Average SCUs per reference"], shown["Max. weight of Xa SCUs"], shown["Max. weight of X SCUs"]) == (
        "1.25 (Xa = 1)",
        "3",
        "5 (X = 4)",
    )
    repeated = page.locator(".score-repeated li").all_text_contents()
    assert repeated == [f"(3) {dam.label} ×2"]
    page.screenshot(path=str(artifacts / "annotator-score.png"))


def test_blind_annotation_in_the_browser(annotator, chromium, live_server):
    page, annotation, dam, valley = annotator
    program_select(page, ".peer-text", "dam failed")
    page.click(f'.scu[data-id="{dam.pk}"]')
    wait_saved(page)
    other = User.objects.create_user("quinn", password=PASSWORD)
    Assignment.objects.create(topic=annotation.peer.topic, annotator=other, task=Assignment.Task.ANNOTATE_PEERS)
    context = chromium.new_context()
    second = context.new_page()
    login(second, live_server.url, "quinn")
    response = second.goto(f"{live_server.url}/annotations/{annotation.pk}/")
    assert response.status == 404, "another annotator's annotation must not even be visible"
    api = second.goto(f"{live_server.url}/api/annotations/{annotation.pk}/full/")
    assert api.status == 404
    second.goto(f"{live_server.url}/")
    second.click("button:has-text('Start')")
    second.wait_for_url(UNTOUCHED_PEER_URL)
    wait_saved(second)
    assert second.locator(".peer-text .seg.covered").count() == 0, (
        "quinn starts from a blank annotation of the same peer"
    )
    assert not PeerAnnotation.objects.filter(annotator=other).exists(), "opening a peer stores nothing"
    context.close()


def test_next_peer_flow_with_progress(annotator, live_server):
    page, annotation, dam, valley = annotator
    from annotation.corpus.models import PeerSummary

    PeerSummary.objects.create(
        topic=annotation.peer.topic, external_id="2", text="The valley flooded after the dam failed."
    )
    page.reload()
    wait_saved(page)
    assert "0 of 2 peers done" in page.text_content(".progress-text")
    first_url = page.url
    page.click("[data-action=done]")
    page.wait_for_url(
        lambda url: url != first_url and UNTOUCHED_PEER_URL.match(url)
    )  # the next peer: no annotation yet
    wait_saved(page)
    assert "peer 2" in page.text_content("h1")
    assert "1 of 2 peers done" in page.text_content(".progress-text")
    annotation.refresh_from_db()
    assert annotation.status == PeerAnnotation.Status.DONE


def test_move_a_match_to_another_scu(annotator):
    page, annotation, dam, valley = annotator
    program_select(page, ".peer-text", "valley was flooded")
    page.click(f'.scu[data-id="{dam.pk}"]')  # a mistake: matched to the wrong SCU
    wait_saved(page)
    page.click(".peer-text .seg.covered >> text=valley was flooded")  # select the match...
    page.click(f'.scu[data-id="{valley.pk}"]')  # ...and the right SCU
    page.keyboard.press("m")
    wait_saved(page)
    match = annotation.matches.get()
    assert match.scu_id == valley.pk and [annotation.peer.text[p.start : p.end] for p in match.parts.all()] == [
        "valley was flooded"
    ]

"""The builder's "Scores of peer annotations" panel in Debian's Chromium: it lists the scores of the
annotations that count (``results.counted``), never one only opened, shows each one's figures once
they are computed (nothing stays "updating…"), and its table fits in the panel."""

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment, PeerSummary
from annotation.peers import assignments
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import counted, score_rows
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import Pyramid

from tests.browser.editors.browser import login, wait_saved, world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def annotated(celery_worker):
    """ann's draft pyramid of T9 (two SCUs; ann coordinates the dataset, so sees every annotation),
    peer 1 finished by three annotators (one with a long name), peer 2 finished by one and only
    opened by another on the way to peer 1. Scores are computed by a real Celery worker on Redis."""
    builder, topic = world()
    topic.dataset.coordinators.add(builder)
    pyramid = Pyramid.objects.create(topic=topic, creator=builder, status=Pyramid.Status.IN_PROGRESS)
    pyramid.references.set(topic.referencesummarys.all())
    refs = {r.external_id: r for r in topic.referencesummarys.all()}

    def span(ref, phrase):
        start = refs[ref].text.index(phrase)
        return [(start, start + len(phrase))]

    dam = pyramid.scus.create(uid=1, label="The dam failed")
    add_contributor(dam, refs["A"], span("A", "The dam burst"))
    add_contributor(dam, refs["B"], span("B", "the dam had failed"))
    flood = pyramid.scus.create(uid=2, label="The valley flooded")
    add_contributor(flood, refs["A"], span("A", "the valley flooded"))
    second = PeerSummary.objects.create(
        topic=topic, external_id="2", text="The valley was flooded after the dam broke."
    )
    first = topic.peersummarys.get(external_id="1")
    for name, peer, scus in [
        ("ann1", first, [dam, flood]),
        ("an-annotator-with-a-rather-long-name", first, [dam]),
        ("ann1", second, [flood]),
    ]:
        user = User.objects.get_or_create(username=name)[0]
        assignment = Assignment.objects.get_or_create(topic=topic, annotator=user, task="annotate_peers")[0]
        annotation = assignments.annotation_for(assignment, peer)
        for i, scu in enumerate(scus):
            add_match(annotation, scu, [(4 * i, 4 * i + 3)])
        annotation.refresh_from_db()  # its revision moved with each match
        annotation.status = "done"
        annotation.save()
    passerby = User.objects.create_user("passerby")
    walk = Assignment.objects.create(topic=topic, annotator=passerby, task="annotate_peers")
    assignments.annotation_for(walk, second)  # opened on the way...
    add_match(assignments.annotation_for(walk, first), dam, [(4, 7)])  # ...to the peer annotated
    assignments.mark_done(walk)  # finishing the assignment finishes what has work in it
    return builder, pyramid


def test_the_panel_lists_the_counted_scores_computed_and_whole(chromium, live_server, artifacts, annotated):
    builder, pyramid = annotated
    expected = [
        (r["summary"], r["annotator"], f"{r['modified']:.4f}", f"{r['original']:.4f}")
        for r in score_rows(pyramid.topic.dataset.topics.all(), include_references=False)
    ]
    assert len(expected) == 4 and counted(PeerAnnotation.objects.filter(pyramid=pyramid)).count() == 4
    assert (
        PeerAnnotation.objects.filter(pyramid=pyramid, annotator__username="passerby", peer__external_id="2")
        .get()
        .status
        == "in_progress"
    )
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    login(page, live_server.url, builder.username)
    page.goto(f"{live_server.url}/pyramids/{pyramid.pk}/build/")
    wait_saved(page)
    page.click(".scores summary")
    page.wait_for_function("() => document.querySelectorAll('.scores tbody tr').length > 0")
    page.locator(".scores").screenshot(path=str(artifacts / "builder-scores-panel-first.png"))
    page.wait_for_function(
        "() => document.querySelector('.scores-state').textContent.includes('up to date')", timeout=60000
    )
    rows = page.eval_on_selector_all(".scores tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    assert sorted(map(tuple, rows)) == sorted(expected), (
        "the scores of the annotations that count, as export_scores gives them"
    )
    assert "updating" not in page.inner_text(".scores")
    fits = page.evaluate("""() => { const box = document.querySelector('.scores'), table = box.querySelector('table');
        return {scroll: box.scrollWidth, client: box.clientWidth, right: table.getBoundingClientRect().right,
                edge: box.getBoundingClientRect().right}; }""")
    assert fits["scroll"] <= fits["client"] and fits["right"] <= fits["edge"], (
        f"the table is cut off on the right: {fits}"
    )
    page.locator(".scores").screenshot(path=str(artifacts / "builder-scores-panel.png"))
    page.screenshot(path=str(artifacts / "builder-scores.png"))
    context.close()

"""Pyramid adjudication end to end in Chromium: two annotators built pyramids of T1 that differ
(set up through the services, ``tests/adjudication/pyramid_world.py``); the coordinator goes from
the Agreement page to the pair's construction page, opens the adjudication, decides every
difference by clicking, saves; a peer is then annotated against the adjudicated pyramid and the
scores page shows its score resting on it, with the note. Screenshots go to test-artifacts/."""

import pytest
from django.contrib.auth import get_user_model

from annotation.adjudication.models import PyramidAdjudication
from annotation.peers import assignments
from annotation.peers.editing import add_match
from annotation.pyramids.models import SCU

from tests.adjudication.pyramid_world import build, content
from tests.adjudication.test_pyramids import EXPECTED
from tests.browser.dashboards.test_dashboards import coordinator_of, logged_in_page

pytestmark = pytest.mark.browser


def test_coordinator_adjudicates_two_pyramids_and_scores_follow(chromium, live_server, transactional_db, artifacts):
    dataset, topic, a, b = build()
    coordinator_of(dataset)
    ann3 = get_user_model().objects.create_user("ann3")
    assignment = topic.assignments.create(annotator=ann3, task="annotate_peers")
    before = assignments.annotation_for(
        assignment, topic.peersummarys.get()
    )  # against ann2's pyramid (newest finished)
    add_match(before, SCU.objects.get(pyramid=b, uid=1), [(0, 9)])
    assignments.mark_done(assignment)
    page, errors = logged_in_page(chromium, live_server)

    page.goto(f"{live_server.url}/datasets/{dataset.pk}/agreement/")
    page.locator(f"tr[data-construction-pair='T1:{a.pk}-{b.pk}'] a").first.click()
    page.get_by_role("link", name="Adjudicate this pair").click()
    page.wait_for_selector("form[data-adjudicate-pyramids]")
    rows = page.locator("table.adjudicate tbody tr")
    assert [rows.nth(i).get_attribute("data-item") for i in range(rows.count())] == ["m2-2", "m3-3", "a4", "b5"]
    assert [rows.nth(i).get_attribute("data-kind") for i in range(rows.count())] == [
        "matched",
        "matched",
        "only_a",
        "only_b",
    ]
    assert page.locator("[data-agreed]").count() == 1  # "cats purr", alike in both
    assert page.locator("tr[data-item='m2-2'] [data-differs=only_b]").inner_text().startswith("C c001xxxxx")
    page.screenshot(path=str(artifacts / "pyramid-adjudication-open.png"), full_page=True)

    # Saving before every difference is decided: the browser asks for the missing ones.
    page.locator("tr[data-item='m2-2'] label", has_text="A's label, contributors of both").click()
    page.locator("tr[data-item='m3-3'] label", has_text="B's SCU").click()
    page.locator("tr[data-item='a4'] label", has_text="neither").click()
    page.get_by_role("button", name="Save adjudicated pyramid").click()
    assert page.locator("tr[data-item='b5'] input:invalid").count() == 2  # keep B's, neither
    assert not PyramidAdjudication.objects.exists()
    page.locator("tr[data-item='b5'] label", has_text="B's SCU").click()
    page.get_by_role("button", name="Save adjudicated pyramid").click()
    page.wait_for_selector(".msg.success")
    adjudicated = PyramidAdjudication.objects.get(topic=topic).pyramid
    assert content(adjudicated) == EXPECTED
    assert page.locator("[data-adjudicated-state]").inner_text().startswith(f"#{adjudicated.pk}, 4 SCUs")
    assert page.locator("tr[data-item='m3-3'] input[value=b]").is_checked(), "the saved decisions are shown again"
    page.screenshot(path=str(artifacts / "pyramid-adjudication-saved.png"), full_page=True)

    # The annotator of peers now gets the adjudicated pyramid; they find "cats purr" and "horses run".
    assignment.refresh_from_db()
    assignment.status = "in_progress"
    assignment.save()
    annotation = assignments.annotation_for(assignment, topic.peersummarys.get())
    assert annotation.pyramid == adjudicated
    add_match(annotation, SCU.objects.get(pyramid=adjudicated, uid=1), [(0, 9)])
    add_match(annotation, SCU.objects.get(pyramid=adjudicated, uid=4), [(30, 40)])
    assignments.mark_done(assignment)

    page.goto(f"{live_server.url}/datasets/{dataset.pk}/scores/")
    peers = [
        r.locator("td").all_inner_texts()
        for r in page.locator("table.per-topic tbody tr").all()
        if r.locator("td").all_inner_texts()[2] == "peer"
    ]
    # By hand: weights 3, 3, 1, 1 over 3 references, Xa = round(8/3) = 3, MaxWeight = 7; found 3 + 1.
    assert [cells[:6] for cells in peers] == [
        ["T1", "1", "peer", "ann3", "ann3; pyramid: adjudicated", f"{4 / 7:.4f}"]
    ], "only the annotation against the adjudicated pyramid is scored"
    assert "adjudicated pyramid" in page.locator("[data-adjudicated-pyramids]").inner_text()
    assert "pyramid: adjudicated" in page.locator("[data-version-note]").inner_text()
    page.screenshot(path=str(artifacts / "pyramid-adjudication-scores.png"), full_page=True)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/scores/?references=1")
    references = [
        cells
        for cells in (r.locator("td").all_inner_texts() for r in page.locator("table.per-topic tbody tr").all())
        if cells[2] == "reference"
    ]
    assert [(cells[1], cells[4]) for cells in references] == [(r, "pyramid: adjudicated") for r in "ABC"], (
        "the references are scored against the adjudicated pyramid only"
    )

    # Agreement before adjudication stays: the construction page still compares ann1's and ann2's pyramids.
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/pyramid-agreement/T1/")
    assert page.locator("table.construction-pairs tbody tr").count() == 1
    assert f"Adjudicated pyramid #{adjudicated.pk}" in page.locator("[data-pyramid-adjudication]").inner_text()
    page.screenshot(path=str(artifacts / "pyramid-adjudication-construction.png"), full_page=True)
    page.close()
    assert not errors

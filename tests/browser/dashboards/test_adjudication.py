"""Adjudication end to end in Chromium: two annotators annotated T1 peer 1 differently (set up
through the services, ``tests/adjudication/world.py``); the coordinator opens the adjudication page
from the peer's agreement page, decides each disagreement by clicking, saves, and the scores page
then shows the adjudicated score with its note. Screenshots go to test-artifacts/."""

import pytest

from annotation.pyramids.scoring_inputs import load_pyramids
from scoring.model import Convention
from scoring.model import PeerAnnotation as ScoringAnnotation
from scoring.scores import score_peer

from tests.adjudication.world import build
from tests.browser.dashboards.test_dashboards import coordinator_of, logged_in_page

pytestmark = pytest.mark.browser


def test_coordinator_adjudicates_and_scores_follow(chromium, live_server, transactional_db, artifacts):
    dataset, _, peer, pyramid = build(users=False)
    coordinator_of(dataset)
    page, errors = logged_in_page(chromium, live_server)

    page.goto(f"{live_server.url}/datasets/{dataset.pk}/agreement/T1/1/")
    page.get_by_role("link", name="Adjudicate the disagreements").click()
    page.wait_for_selector("form[data-adjudicate]")
    rows = page.locator("table.adjudicate tbody tr")
    assert [rows.nth(i).get_attribute("data-item") for i in range(rows.count())] == ["3", "4", "non_matching"]
    assert [rows.nth(i).get_attribute("data-kind") for i in range(rows.count())] == ["one_only", "spans", "one_only"]
    assert page.locator("[data-agreed]").count() == 1  # SCU 1, which both found at the same place
    page.screenshot(path=str(artifacts / "adjudication-open.png"), full_page=True)

    # Saving before every disagreement is decided: the browser itself asks for the missing ones.
    page.locator("tr[data-item='3'] label", has_text="neither").click()
    page.get_by_role("button", name="Save adjudicated version").click()
    assert page.locator("tr[data-item='4'] input:invalid").count() == 4  # ann1's, ann2's, both, neither
    assert page.locator("tr[data-item='3'] input:invalid").count() == 0 and not page.locator(".msg").count()
    page.locator("tr[data-item='4'] label", has_text="neither").click()
    page.locator("tr[data-item='non_matching'] label", has_text="both").click()
    page.get_by_role("button", name="Save adjudicated version").click()
    page.wait_for_selector(".msg.success")
    page.screenshot(path=str(artifacts / "adjudication-saved.png"), full_page=True)

    # Independently: the scoring library on what was decided (SCU 1, agreed; ann1's one non-matching unit).
    expected = score_peer(load_pyramids([pyramid.pk])[pyramid.pk], ScoringAnnotation({1: 1}, 1), Convention.NIST)
    assert page.locator("[data-adjudicated-score]").inner_text().startswith(f"modified {expected.modified:.3f}")

    page.goto(f"{live_server.url}/datasets/{dataset.pk}/scores/")
    row = page.locator("table.per-topic tr", has=page.locator("td[data-version=adjudicated]"))
    assert row.count() == 1
    cells = row.locator("td").all_inner_texts()
    assert cells[:5] == ["T1", "1", "peer", "—", "adjudicated"]
    assert cells[5] == f"{expected.modified:.4f}" and cells[7] == f"{expected.original:.4f}"
    topic_1_peer_1 = [
        r
        for r in page.locator("table.per-topic tbody tr").all()
        if r.locator("td").all_inner_texts()[:3] == ["T1", "1", "peer"]
    ]
    assert len(topic_1_peer_1) == 1, "the annotators' versions are no longer scored"
    assert "adjudicated" in page.locator("[data-version-note]").inner_text()
    assert page.locator("tr[data-system='1'] [data-adjudicated]").inner_text() == "1 adjudicated"
    page.screenshot(path=str(artifacts / "adjudication-scores.png"), full_page=True)
    assert not errors

"""Issue 21's automatic score, kept apart, in Chromium: the coordinator sees it only in the
meta-evaluation page's "Automatic scores (unverified)" section (its correlation with the expert
scores computed here independently), while the scores page, read as a person reads it, shows the
expert's scores. Peer 3 tells them apart: automatic 0.5 (two SCUs suggested), expert 0.25 (one)."""

import numpy
import pytest
from django.contrib.auth.models import User

from annotation.pyramids import automatic_peer_scores

from tests.browser.setup.browser import open_as
from tests.corpus.world import PASSWORD
from tests.pyramids.test_automatic_scores import _fresh, study  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_automatic_score_is_shown_apart_and_never_as_an_experts(chromium, live_server, study, artifacts):  # noqa: F811  (the imported fixture)
    dataset, pyramid, peers, scus = study
    dataset.coordinators.add(User.objects.create_user("chief", password=PASSWORD))
    page, errors = open_as(chromium, live_server, "chief")

    page.goto(f"{live_server.url}/datasets/{dataset.pk}/metaeval/")
    for _ in range(
        30
    ):  # the first visit publishes the computations (run in-process here): the page says so, then shows them
        if page.locator("[data-automatic] table.metaeval").count():
            break
        page.wait_for_timeout(500)
        page.reload()
    section = page.locator("[data-automatic]")
    assert section.locator("h2").inner_text() == "Automatic scores (unverified)"
    assert "kept apart from the expert scores" in section.inner_text()
    assert automatic_peer_scores.stored(_fresh(pyramid))["nist"]["3"] == 0.5
    automatic, expert = [0.5, 1.0, 0.5, 0.0], [0.5, 1.0, 0.25, 0.0]  # peers 1-4; one topic: the systems are the peers
    pearson = section.locator('tr[data-level="system"] [data-method="pearson"]').inner_text()
    assert pearson == f"{numpy.corrcoef(automatic, expert)[0, 1]:.3f}"
    section.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "metaeval-automatic-apart.png"))

    page.goto(f"{live_server.url}/datasets/{dataset.pk}/scores/")
    page.wait_for_selector("table.per-topic tbody tr")
    shown = {
        cells[1]: cells[5]
        for cells in page.eval_on_selector_all(
            "table.per-topic tbody tr.peer", "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))"
        )
    }
    assert shown == {"1": "0.5000", "2": "1.0000", "3": "0.2500", "4": "0.0000"}, (
        "the expert's modified scores, never the automatic ones"
    )
    text = page.inner_text("main").lower()
    assert "automatic" not in text and "unverified" not in text
    assert errors == []

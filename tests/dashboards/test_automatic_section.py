"""The meta-evaluation page's "Automatic scores (unverified)" section: computed off the request (the
visit publishes the job; Celery runs eagerly here, tests/dashboards/conftest.py), labelled, with the
ranking it used, and its correlation with the expert scores."""

import numpy
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.dashboards.snapshots import recompute_dataset
from annotation.pyramids import automatic_peer_scores

from tests.pyramids.test_automatic_scores import _fresh, study  # noqa: F401  (fixture)


def test_metaeval_page_shows_them_apart_with_the_ranking_used(study):  # noqa: F811  (the imported fixture)
    dataset, pyramid, peers, scus = study
    coordinator = User.objects.create_user("chief")
    dataset.coordinators.add(coordinator)
    recompute_dataset(dataset.pk)
    client = Client()
    client.force_login(coordinator)
    url = reverse("dashboards:metaeval", args=[dataset.pk])
    page = client.get(url)
    section = page.content.decode().split("data-automatic>")[1].split("</section>")[0]
    assert "Automatic scores (unverified)" in section and "hand-set rules (no trained model file" in section
    assert automatic_peer_scores.stored(_fresh(pyramid)) is not None, (
        "the visit published the job (run in-process here)"
    )
    shown = client.get(url).context["automatic"]
    system = shown["levels"][0]
    # one topic: the systems are the peers; automatic 0.5, 1.0, 0.5, 0 against the expert's 0.5, 1.0, 0.25, 0
    assert system["level"] == "system" and system["n"] == 4 and shown["paired"] == 4
    assert system["pearson"] == pytest.approx(numpy.corrcoef([0.5, 1.0, 0.5, 0.0], [0.5, 1.0, 0.25, 0.0])[0, 1])


def test_the_expert_score_pages_and_downloads_keep_the_expert_scores(study):  # noqa: F811  (the imported fixture)
    """Peer 3: the automatic score is 0.5 (SCUs 3 and 4 suggested), the expert's 0.25 (SCU 3 only):
    once the automatic scores are computed, the scores page and its downloads still say 0.25."""
    dataset, pyramid, peers, scus = study
    automatic_peer_scores.compute_pyramids([pyramid.pk])
    assert automatic_peer_scores.stored(_fresh(pyramid))["nist"]["3"] == 0.5
    coordinator = User.objects.create_user("chief")
    dataset.coordinators.add(coordinator)
    recompute_dataset(dataset.pk)
    client = Client()
    client.force_login(coordinator)
    rows = client.get(
        reverse("dashboards:scores_export", args=[dataset.pk, "json"]), {"table": "topics", "references": 0}
    ).json()
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert {r["summary"]: r["modified"] for r in rows if r["kind"] == "peer"} == {
        "1": 0.5,
        "2": 1.0,
        "3": 0.25,
        "4": 0.0,
    }
    page = client.get(reverse("dashboards:scores", args=[dataset.pk])).content.decode()
    assert "automatic" not in page.lower() and "unverified" not in page

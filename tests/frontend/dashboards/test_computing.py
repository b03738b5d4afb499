"""No dashboard page, download or API answer computes a snapshot on the request: with none stored
yet (the background runner has not run: here ``queue.publish`` only records), every caller of
``snapshot_for`` schedules it and answers at once — pages with the "being computed" frame that
reloads itself, downloads with 503 + Retry-After — and shows the figures once stored. The REST API
alone computes a missing first snapshot on its request (its contract is the rows)."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.dashboards import snapshots
from annotation.dashboards.models import DatasetDashboard

from tests.dashboards.helpers import build_toy, make_users
from tests.frontend.dashboards.test_views import client_for

pytestmark = pytest.mark.django_db

PAGES = [
    ("agreement", []),
    ("agreement_topic", ["T1"]),
    ("agreement_peer", ["T1", "1"]),
    ("scores", []),
    ("significance", []),
    ("metaeval", []),
]
DOWNLOADS = [
    ("scores_export", ["csv"]),
    ("scores_export", ["json"]),
    ("agreement_export", ["csv"]),
    ("metaeval_export", ["json"]),
    ("statistics_export", ["csv"]),
    ("chart_export", ["systems"]),
    ("chart_export", ["tiers"]),
    ("chart_export", ["stability"]),
]


@pytest.fixture
def pending(monkeypatch):
    """The background path as production has it: publishing only hands the ids over."""
    published = []
    monkeypatch.setattr(snapshots.queue, "publish", lambda kind, ids: published.append((kind, sorted(set(ids)))))
    return published


@pytest.fixture
def toy():
    dataset = build_toy()
    DatasetDashboard.objects.filter(dataset=dataset).delete()  # as right after an import, before the worker ran
    return dataset, make_users(dataset)


def _never_computed(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a snapshot was computed on the request")

    monkeypatch.setattr(snapshots, "compute_payload", refuse)
    monkeypatch.setattr(snapshots, "recompute_dataset", refuse)


def test_pages_say_the_figures_are_being_computed_and_schedule_them(toy, pending, monkeypatch):
    dataset, users = toy
    coord = client_for(users["coord"])
    _never_computed(monkeypatch)
    for name, args in PAGES:
        response = coord.get(reverse(f"dashboards:{name}", args=[dataset.pk, *args]))
        html = response.content.decode()
        assert response.status_code == 200, name
        assert "data-computing" in html and "being computed for the first time" in html, name
        # It polls (live.js) and claims no figure: no empty-state message the data would contradict.
        assert 'data-status-url="' in html and "dashboards/live" in html, name
        assert "data-figures" not in html and "No " not in html.split('class="tabs"')[1], name
    assert not DatasetDashboard.objects.filter(dataset=dataset).exists()
    assert pending and all(p == ("dashboard", [dataset.pk]) for p in pending)
    status = coord.get(reverse("dashboards:status", args=[dataset.pk])).json()
    assert status == {"computed_at": None, "current": False, "as_of": None, "computing": True}


def test_downloads_answer_503_with_retry_after(toy, pending, monkeypatch):
    dataset, users = toy
    coord = client_for(users["coord"])
    _never_computed(monkeypatch)
    for name, args in DOWNLOADS:
        response = coord.get(reverse(f"dashboards:{name}", args=[dataset.pk, *args]))
        assert response.status_code == 503, (name, args)
        assert response["Retry-After"] == str(snapshots.RETRY_AFTER_SECONDS)
        assert "being computed" in response.content.decode() and "Content-Disposition" not in response
    # Permissions come first: an annotator learns nothing about the dataset's state.
    assert (
        client_for(users["annotator"]).get(reverse("dashboards:scores_export", args=[dataset.pk, "csv"])).status_code
        == 403
    )
    assert not DatasetDashboard.objects.filter(dataset=dataset).exists()


def test_once_stored_the_pages_and_downloads_show_it(toy, pending):
    dataset, users = toy
    coord = client_for(users["coord"])
    assert coord.get(reverse("dashboards:scores", args=[dataset.pk])).status_code == 200
    assert coord.get(reverse("dashboards:status", args=[dataset.pk])).json()["computing"] is True
    snapshots.recompute_datasets([k for _, ids in pending for k in ids])  # what the worker does
    status = coord.get(reverse("dashboards:status", args=[dataset.pk])).json()
    assert status["computed_at"] and status["current"] is True and "computing" not in status
    html = coord.get(reverse("dashboards:scores", args=[dataset.pk])).content.decode()
    assert "data-figures" in html and "data-computing" not in html
    assert coord.get(reverse("dashboards:scores_export", args=[dataset.pk, "csv"])).status_code == 200


def test_in_tests_the_synchronous_runner_computes_it_where_it_is_scheduled(toy):
    """Without the ``pending`` stand-in the test runner is synchronous: scheduling has computed it."""
    dataset, users = toy
    html = client_for(users["coord"]).get(reverse("dashboards:scores", args=[dataset.pk])).content.decode()
    assert "data-figures" in html and DatasetDashboard.objects.filter(dataset=dataset).exists()


def test_the_first_snapshot_is_scheduled_once_while_pages_poll(toy, pending):
    """With the background thread (not the tests' synchronous runner), polling pages schedule the
    first snapshot once, not once per poll (each would queue another whole computation)."""
    from django.core.cache import cache

    from annotation.jobs.queue import runner

    dataset, users = toy
    coord = client_for(users["coord"])
    runner.synchronous = False  # restored by tests/conftest.py
    key = f"dashboard:first:{dataset.pk}"
    cache.delete(key)
    try:
        for _ in range(3):
            assert coord.get(reverse("dashboards:status", args=[dataset.pk])).json()["computing"] is True
        assert coord.get(reverse("dashboards:scores", args=[dataset.pk])).status_code == 200
        assert pending == [("dashboard", [dataset.pk])]
        cache.delete(key)  # FIRST_SNAPSHOT_PATIENCE passed and still none: scheduled again
        coord.get(reverse("dashboards:status", args=[dataset.pk]))
        assert pending == [("dashboard", [dataset.pk])] * 2
    finally:
        cache.delete(key)


def test_the_api_computes_a_missing_first_snapshot_once(toy, pending):
    dataset, users = toy
    api = APIClient()
    api.force_authenticate(users["annotator"])
    assert api.get(f"/api/datasets/{dataset.pk}/statistics/").status_code in (403, 404)
    assert not DatasetDashboard.objects.filter(dataset=dataset).exists()  # refused before any work
    api.force_authenticate(users["coord"])
    answer = api.get(f"/api/datasets/{dataset.pk}/statistics/?table=systems")
    assert answer.status_code == 200 and answer.json()
    stored = DatasetDashboard.objects.get(dataset=dataset)
    assert snapshots.is_current(stored) and pending == []  # computed here, nothing left to the runner
    views = stored.data["conventions"]["nist"]["statistics"]["views"]
    expected = sorted((view, s["system"]) for view, v in views.items() for s in v["systems"])
    assert sorted((r["view"], r["system"]) for r in answer.json()) == expected
    api.get(f"/api/datasets/{dataset.pk}/statistics/?table=pairs")
    assert DatasetDashboard.objects.get(dataset=dataset).computed_at == stored.computed_at  # read, not recomputed

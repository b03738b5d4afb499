"""A lightweight pyramid's downloads are named and stamped like every other (``services.downloads``):
dataset, run, level and date in the name; the app version and the scoring settings in every row."""

import csv
import io
import json
import re

import pytest
from django.test import Client
from django.utils import timezone

from annotation.api.downloads import app_version

pytestmark = pytest.mark.django_db


def name_of(response) -> str:
    [name] = re.findall(r'^attachment; filename="([^"]+)"$', response["Content-Disposition"])
    return name


def test_lightweight_scores_tasks_and_chart_are_named_and_stamped(as_user, world, monkeypatch):
    coord = as_user("coord")
    run = coord.post(
        "/api/lightweight/", {"dataset": world.d1.pk, "name": "crowd one", "threshold": 0.6}, format="json"
    ).data["id"]
    today = timezone.localdate().isoformat()
    settings = {"agreement": "positional", "blank": "present", "threshold": 0.6, "topic_filter": 0.0}

    as_csv = coord.get(f"/api/lightweight/{run}/scores/?level=system&format=csv")
    assert name_of(as_csv) == f"D1-lightweight-crowd-one-system-{today}.csv"
    header = next(csv.reader(io.StringIO(as_csv.content.decode())))
    assert header[-2:] == ["app_version", "settings"]
    summary = coord.get(f"/api/lightweight/{run}/scores/?level=worker&format=json&threshold=0.9")
    assert name_of(summary) == f"D1-lightweight-crowd-one-worker-{today}.json"
    # The stamp is the settings the rows were computed with (the stored ones, overridden by the query).
    from annotation.lightweight import scores as lightweight_scores

    monkeypatch.setattr(lightweight_scores, "rows", lambda scores, level: [{"system": "S1", "score": 0.5}])
    labels = coord.get(f"/api/lightweight/{run}/scores/?level=system&format=csv&agreement=none")
    [row] = csv.DictReader(io.StringIO(labels.content.decode()))
    assert row["system"] == "S1" and row["app_version"] == app_version()
    assert json.loads(row["settings"]) == settings | {"agreement": "none"}

    tasks = coord.get(f"/api/lightweight/{run}/mturk-input/?format=csv&batch=2")
    assert name_of(tasks) == f"D1-lightweight-crowd-one-tasks-batch-2-{today}.csv"
    assert tasks.content.decode().startswith("eventId,")  # MTurk's format: no columns added

    client = Client()
    client.force_login(world.users["coord"])
    chart = client.get(f"/lightweight/{run}/chart.csv")
    assert name_of(chart) == f"D1-lightweight-crowd-one-systems-chart-{today}.csv"
    assert chart.content.decode().splitlines()[0].endswith(",app_version,settings")

"""The statistics stored in a dashboard snapshot: computed from the snapshot's own score rows (the
means are the page's means), reproducible (same seed, same figures), checked on the toy data
against direct computations (every sign pattern enumerated, Holm by hand)."""

import itertools

import numpy as np
import pytest

from annotation.dashboards import snapshots
from annotation.dashboards.models import DatasetDashboard
from annotation.dashboards.statistics import download_rows, table_rows

from tests.dashboards.helpers import build_toy
from tests.dashboards.test_snapshots import JUDGMENTS

pytestmark = pytest.mark.django_db


@pytest.fixture
def payload():
    from tests.dashboards.judged import import_judgments_csv

    dataset = build_toy()
    import_judgments_csv(dataset, JUDGMENTS)
    snapshots.recompute_dataset(dataset.pk)
    return DatasetDashboard.objects.get(dataset=dataset).data


def enumerated_p(a, b):
    d = np.asarray(a) - np.asarray(b)
    observed = abs(d.sum())
    sums = [abs(np.dot(s, d)) for s in itertools.product([-1, 1], repeat=len(d))]
    return sum(x >= observed - 1e-12 for x in sums) / len(sums)


@pytest.mark.parametrize("convention", ["nist", "sacrerouge"])
def test_system_statistics_rest_on_the_page_rows(payload, convention):
    figures = payload["conventions"][convention]
    stats = figures["statistics"]
    assert stats["settings"]["seed"] and stats["settings"]["confidence"] == 0.95
    for view, kinds, score in (
        ("peers", {"peer"}, "modified"),
        ("peers+references", {"peer", "reference"}, "modified_jk"),
    ):
        shown = stats["views"][view]
        assert shown["score"] == score
        means = {r["system"]: r[score] for r in figures["per_system"] if r["kind"] in kinds and r[score] is not None}
        assert {s["system"]: s["mean"] for s in shown["systems"]} == pytest.approx(means)
        ordered = [s["mean"] for s in shown["systems"]]
        assert ordered == sorted(ordered, reverse=True)
        # per system and topic: the mean of its rows' scores there (two annotators count once)
        per_topic = {}
        for r in figures["per_topic"]:
            if r["kind"] in kinds and r[score] is not None:
                per_topic.setdefault(r["summary"], {}).setdefault(r["topic"], []).append(r[score])
        n = len(shown["systems"])
        assert len(shown["pairs"]) == n * (n - 1) // 2
        raw = []
        for pair in shown["pairs"]:
            a, b = per_topic[pair["a"]], per_topic[pair["b"]]
            shared = sorted(a.keys() & b.keys())
            assert pair["n"] == len(shared)
            if shared:
                xa, xb = [np.mean(a[t]) for t in shared], [np.mean(b[t]) for t in shared]
                assert pair["p_value"] == pytest.approx(enumerated_p(xa, xb))
                assert pair["difference"] == pytest.approx(np.mean(np.subtract(xa, xb)))
            raw.append(pair["p_value"])
        present = sorted(p for p in raw if p is not None)
        m = len(present)
        holm_by_hand = {}
        running = 0
        for i, p in enumerate(present):
            running = max(running, min(1, (m - i) * p))
            holm_by_hand.setdefault(p, running)
        assert [pair["p_holm"] for pair in shown["pairs"]] == [
            holm_by_hand.get(p) if p is not None else None for p in raw
        ]
        assert all(s["low"] is None or s["low"] <= s["mean"] <= s["high"] for s in shown["systems"])
    assert "scu_tests" in stats["views"]["peers"] and "reference_stability" in stats["views"]["peers"]


def test_statistics_are_reproducible_and_flatten_for_downloads(payload):
    dataset_id = DatasetDashboard.objects.get().dataset_id
    DatasetDashboard.objects.all().delete()
    snapshots.recompute_dataset(dataset_id)
    again = DatasetDashboard.objects.get().data
    for convention in ("nist", "sacrerouge"):
        assert again["conventions"][convention]["statistics"] == payload["conventions"][convention]["statistics"]
        assert (
            again["conventions"][convention]["metaeval_intervals"]
            == payload["conventions"][convention]["metaeval_intervals"]
        )
    stats = payload["conventions"]["nist"]["statistics"]
    for table in ("systems", "pairs", "scu_tests", "power", "stability"):
        rows, keys = download_rows(payload["conventions"]["nist"], table)
        assert rows and all(set(keys) <= set(r) | {"confidence", "resamples"} for r in rows), table
    with pytest.raises(ValueError):
        table_rows(stats, "nothing", {})


def _client(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


def test_pages_downloads_and_api_show_the_stored_statistics(payload):
    import csv
    import io

    from django.urls import reverse
    from rest_framework.test import APIClient

    from annotation.corpus.models import Dataset

    from tests.dashboards.helpers import fmt, make_users

    dataset = Dataset.objects.get(name="Toy")
    users = make_users(dataset)
    coord = _client(users["coord"])
    stats = payload["conventions"]["nist"]["statistics"]["views"]["peers"]
    html = coord.get(reverse("dashboards:significance", args=[dataset.pk])).content.decode()
    for s in stats["systems"]:
        assert f'data-system="{s["system"]}"' in html
        if s["low"] is not None:
            assert f"{fmt(s['low'], 4)} – {fmt(s['high'], 4)}" in html
    for p in stats["pairs"]:
        verdict = "same" if not p["significant"] else "better"
        assert f'class="{verdict}" data-a="{p["a"]}" data-b="{p["b"]}"' in html or p["p_value"] is None
    assert str(payload["conventions"]["nist"]["statistics"]["settings"]["seed"]) in html
    # The toy's pairs share at most 3 topics: none can pass Holm's first threshold, and the page says why.
    tested = [p for p in stats["pairs"] if p["p_value"] is not None]
    assert f"corrected for the {len(tested)} pair{'s' if len(tested) != 1 else ''} tested (Holm)" in html
    assert f"{len(tested)} of the {len(tested)} pair" in html and "data-few-topics" in html
    scores_html = coord.get(reverse("dashboards:scores", args=[dataset.pk])).content.decode()
    assert "Topics needed" in scores_html and "data-interval" in scores_html
    with_refs = coord.get(reverse("dashboards:significance", args=[dataset.pk]) + "?references=1&convention=sacrerouge")
    assert with_refs.status_code == 200 and "modified_jk" in with_refs.content.decode()
    # The page's CSV and the API's CSV are the stored rows.
    download = coord.get(reverse("dashboards:statistics_export", args=[dataset.pk, "csv"]) + "?table=pairs")
    rows = list(csv.DictReader(io.StringIO(download.content.decode())))
    expected, keys = table_rows(payload["conventions"]["nist"]["statistics"], "pairs", {})
    assert len(rows) == len(expected) and list(rows[0]) == list(keys) + ["app_version", "settings"]
    assert [float(r["p_holm"]) for r in rows if r["p_holm"]] == pytest.approx(
        [r["p_holm"] for r in expected if r["p_holm"] is not None]
    )
    assert (
        coord.get(reverse("dashboards:statistics_export", args=[dataset.pk, "csv"]) + "?table=nope").status_code == 400
    )
    api = APIClient()
    api.force_authenticate(users["coord"])
    answer = api.get(f"/api/datasets/{dataset.pk}/statistics/?table=metaeval&convention=sacrerouge")
    assert answer.status_code == 200
    intervals = payload["conventions"]["sacrerouge"]["metaeval_intervals"]
    assert len(answer.json()) == len(intervals) * 2 * 3
    assert api.get(f"/api/datasets/{dataset.pk}/statistics/?table=nope").status_code == 400
    assert (
        api.get(f"/api/datasets/{dataset.pk}/statistics/?format=csv&table=power")
        .content.decode()
        .startswith("dataset,view,score,adjudicated,difference")
    )
    api.force_authenticate(users["annotator"])
    assert api.get(f"/api/datasets/{dataset.pk}/statistics/").status_code in (403, 404)


def test_p_values_below_the_printed_precision_are_never_zero():
    from frontend.templatetags.statistics import p_value

    assert p_value(2 / 2**20) == "< 0.0001" and p_value(2 / 2**20, "p") == "p < 0.0001"
    assert p_value(0.01234) == "0.0123" and p_value(0.0001, "p") == "p = 0.0001"
    assert p_value(None) == "—" and p_value(1.0) == "1.0000"

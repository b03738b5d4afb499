"""The stored dashboard snapshot: every figure equals the services behind the exports (and
independent computations), unchanged topics are reused without changing any figure, a newer
snapshot is never overwritten, and "current" follows the live state."""

import json
import time
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from nltk.metrics.agreement import AnnotationTask
from scipy import stats

from annotation.corpus.models import Assignment, PeerSummary, Topic
from annotation.dashboards import snapshots
from annotation.dashboards.figures import metaeval_table, score_dashboard, tier_histograms
from annotation.dashboards.models import DatasetDashboard
from annotation.jobs import queue
from annotation.jobs.kept import Kept
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.peers.recompute import recompute_topics
from annotation.peers.results import agreement_rows, score_rows, topics_of
from annotation.pyramids.models import SCU
from scoring.agreement import dice_distance

from tests.dashboards.helpers import build_toy
from tests.dashboards.judged import import_judgments_csv

pytestmark = pytest.mark.django_db
JUDGMENTS = "topic,summary,metric,value\n" + "".join(
    f"{t},{s},content,{v}\n"
    for (t, s), v in {
        ("T1", "1"): 4,
        ("T1", "2"): 2,
        ("T1", "3"): 5,
        ("T2", "1"): 1,
        ("T2", "2"): 4,
        ("T2", "3"): 2,
        ("T1", "A"): 5,
        ("T2", "B"): 3,
    }.items()
)


@pytest.fixture
def dataset():
    d = build_toy()
    import_judgments_csv(d, JUDGMENTS)
    return d


def snapshot(dataset) -> DatasetDashboard:
    snapshots.recompute_dataset(dataset.pk)
    return DatasetDashboard.objects.get(dataset=dataset)


def without_skipped(rows):
    return [{k: v for k, v in r.items() if k != "skipped"} for r in rows]


def assert_equals_services(payload, name="Toy"):
    for convention in ("nist", "sacrerouge"):
        figures = payload["conventions"][convention]
        board = score_dashboard(name, convention, include_references=True)
        peers_only = score_dashboard(name, convention, include_references=False)
        assert figures["per_topic"] == board["per_topic"] == score_rows(topics_of(name), convention)
        assert figures["per_system"] == board["per_system"]
        assert [r for r in figures["per_topic"] if r["kind"] == "peer"] == peers_only["per_topic"]
        assert [r for r in figures["per_system"] if r["kind"] == "peer"] == peers_only["per_system"]
        assert figures["tiers"] == tier_histograms(name, convention)
        assert figures["agreement"] == agreement_rows(topics_of(name), convention)
        for score in ("modified", "modified_jk"):
            assert without_skipped(figures["metaeval"][score]) == metaeval_table(name, convention, score=score)["rows"]


def test_every_figure_equals_the_services(dataset):
    payload = snapshot(dataset).data
    assert_equals_services(payload)
    assert payload["judgments"] == {"content": 8}


def nltk_alpha(matrices: dict) -> float:
    data = [
        (coder, (peer, uid), v) for peer, m in matrices.items() for coder, row in m.items() for uid, v in row.items()
    ]
    return AnnotationTask(data=data, distance=dice_distance).alpha()


# T1, by hand: counts per SCU 1..4 of each annotator, and modified scores (MaxWeight(Xa) = 5).
T1_COUNTS = {
    "1": {"ann1": [1, 0, 1, 0], "ann2": [1, 0, 0, 0]},
    "2": {"ann1": [0, 1, 0, 0], "ann2": [0, 2, 0, 0]},
    "3": {"ann1": [1, 1, 0, 0], "ann2": [1, 0, 0, 0]},
}
T1_MODIFIED = {"1": (0.8, 0.6), "2": (0.4, 0.4), "3": (1.0, 0.6)}


def test_agreement_figures_against_nltk_and_scipy(dataset):
    payload = snapshot(dataset).data
    figures = payload["conventions"]["nist"]
    [row] = figures["agreement"]
    detail = figures["agreement_details"]["T1"]
    matrices = {p: {c: dict(enumerate(v, start=1)) for c, v in by.items()} for p, by in T1_COUNTS.items()}
    assert row["topic"] == "T1" and row["peers"] == 3 and detail["compared"] == ["ann1", "ann2"]
    for peer in detail["peers"]:
        assert peer["alpha"]["value"] == pytest.approx(nltk_alpha({peer["peer"]: matrices[peer["peer"]]}), abs=1e-12)
        assert peer["alpha"]["units"] == 4
        a, b = T1_MODIFIED[peer["peer"]]
        assert (peer["modified"]["ann1"], peer["modified"]["ann2"]) == (pytest.approx(a), pytest.approx(b))
        assert peer["diff"] == pytest.approx(abs(a - b)) and peer["flagged"] == (abs(a - b) > 0.06)
    assert row["alpha_dice_pooled"] == pytest.approx(nltk_alpha(matrices), abs=1e-12) and row["units_pooled"] == 12
    assert row["alpha_dice_mean"] == pytest.approx(sum(nltk_alpha({p: m}) for p, m in matrices.items()) / 3, abs=1e-12)
    assert (detail["peers_in_mean"], detail["units_in_mean"], detail["flagged"]) == (3, 12, 2)
    x, y = zip(*T1_MODIFIED.values(), strict=True)
    assert row["pearson_modified"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert row["pearson_ci"] is None and detail["pearson_ci_reason"] == "a Fisher-z interval needs more than 3 pairs"
    assert row["mean_abs_diff_modified"] == pytest.approx(0.2)
    # The annotator pair matrix: pooled over every peer both annotated (here T1's three).
    assert payload["pairs"] == [
        {
            "a": "ann1",
            "b": "ann2",
            "value": pytest.approx(nltk_alpha(matrices), abs=1e-12),
            "reason": None,
            "units": 12,
            "peers": 3,
            "topics": 1,
        }
    ]


def test_not_computable_reasons(db):
    d = build_toy("Tiny")
    # Only peer 1 of T1 doubly annotated: Pearson needs 3 pairs.
    PeerAnnotation.objects.filter(annotator__username="ann2").exclude(peer__external_id="1").delete()
    detail = snapshot(d).data["conventions"]["nist"]["agreement_details"]["T1"]
    assert detail["pearson_reason"] == "fewer than 3 pairs (n = 1)"
    # Both annotators found exactly the same thing: alpha_Dice is not computable for that peer.
    peer = PeerSummary.objects.get(topic__dataset=d, topic__external_id="T1", external_id="1")
    PeerMatch.objects.filter(annotation__peer=peer).delete()  # both found nothing: every value is 0
    payload = snapshot(d).data["conventions"]["nist"]
    [row] = payload["agreement"]
    assert row["alpha_dice_by_peer"]["1"]["value"] is None
    detail = payload["agreement_details"]["T1"]
    assert detail["mean_reason"] == "no peer has a computable alpha" and detail["not_computable"] == ["1"]
    assert detail["pooled_reason"].startswith("not computable: every value is identical")


def test_unchanged_topics_are_reused_and_figures_stay_equal(dataset, django_assert_max_num_queries):
    first = snapshot(dataset)
    t2 = Topic.objects.get(dataset=dataset, external_id="T2")
    annotation = PeerAnnotation.objects.get(peer__topic=t2, peer__external_id="3")
    add_match(annotation, SCU.objects.get(pyramid=annotation.pyramid, uid=1), [(10, 14)])
    live = snapshots.fingerprint(dataset)
    assert snapshots._reusable(dataset, list(dataset.topics.order_by("external_id")), live, first) == {
        Topic.objects.get(dataset=dataset, external_id="T1").pk
    }
    second = snapshot(dataset)
    assert_equals_services(second.data)
    assert second.data == snapshots.compute_payload(dataset, live, previous=None)
    assert second.data["conventions"]["nist"]["per_system"] != first.data["conventions"]["nist"]["per_system"]


def test_stability_scores_kept_between_snapshots_change_no_figure(dataset, monkeypatch):
    """The reference-stability scores the process keeps per topic's data (``statistics``'s memo): after
    a save in T2 only T2 is scored again, and the snapshot equals one computed with nothing kept."""
    from annotation.dashboards import statistics
    from scoring import stability

    monkeypatch.setattr(statistics, "_STABILITY_MEMO", {})
    scored = []
    real = stability._system_means
    monkeypatch.setattr(stability, "_system_means", lambda p, a, c: scored.append(p) or real(p, a, c))
    snapshot(dataset)
    everything = len(scored)
    t2 = Topic.objects.get(dataset=dataset, external_id="T2")
    annotation = PeerAnnotation.objects.get(peer__topic=t2, peer__external_id="3")
    add_match(annotation, SCU.objects.get(pyramid=annotation.pyramid, uid=1), [(10, 14)])
    scored.clear()
    second = snapshot(dataset)
    assert 0 < len(scored) < everything  # T2's subsets, not T1's
    monkeypatch.setattr(statistics, "_STABILITY_MEMO", {})
    assert second.data == snapshots.compute_payload(dataset, snapshots.fingerprint(dataset), previous=None)


def test_statistics_kept_for_the_same_scores_and_only_for_them(dataset, monkeypatch):
    """A view's statistics and the SCU-level tests are kept in the process under their input scores
    (``statistics``'s memo): matches saved in an unfinished annotation (which counts for no score)
    change the data but no score, and the snapshot computes none of them again; a save in a
    finished annotation moves a score, and what is computed again equals a snapshot computed with
    nothing kept."""
    from annotation.dashboards import statistics

    monkeypatch.setattr(statistics, "_FIGURES_MEMO", {})
    computed = []
    view, scu = statistics._view_statistics, statistics.PeerInputs._computed_scu_tests
    monkeypatch.setattr(statistics, "_view_statistics", lambda data, seed: computed.append("view") or view(data, seed))
    monkeypatch.setattr(
        statistics.PeerInputs, "_computed_scu_tests", lambda self, seed: computed.append("scu") or scu(self, seed)
    )
    first = snapshot(dataset)
    assert "view" in computed and "scu" in computed
    t2 = Topic.objects.get(dataset=dataset, external_id="T2")
    unfinished = PeerAnnotation.objects.create(
        peer=PeerSummary.objects.get(topic=t2, external_id="1"),
        pyramid=t2.pyramids.get(),
        annotator=get_user_model().objects.get(username="ann2"),
    )
    add_match(unfinished, SCU.objects.get(pyramid=unfinished.pyramid, uid=1), [(0, 4)])
    computed.clear()
    second = snapshot(dataset)
    assert second.fingerprint != first.fingerprint and computed == []
    assert second.data == first.data
    finished = PeerAnnotation.objects.get(peer__topic=t2, peer__external_id="3", status="done")
    add_match(finished, SCU.objects.get(pyramid=finished.pyramid, uid=1), [(10, 14)])
    computed.clear()
    third = snapshot(dataset)
    assert "view" in computed and "scu" in computed
    monkeypatch.setattr(statistics, "_FIGURES_MEMO", {})
    monkeypatch.setattr(statistics, "_STABILITY_MEMO", {})
    assert third.data == snapshots.compute_payload(dataset, snapshots.fingerprint(dataset), previous=None)
    assert third.data["conventions"]["nist"]["statistics"] != first.data["conventions"]["nist"]["statistics"]


def test_kept_statistics_are_told_apart_by_every_bit_of_a_score(monkeypatch):
    """The memo's key is exact: scores one unit in the last place apart, or the same scores in
    another topic order (the bootstrap pairs resampled positions with values in order), are
    other inputs, each answered with its own figures; and at most ``FIGURES_MEMO_ENTRIES`` are kept."""
    import math

    from annotation.dashboards import statistics

    monkeypatch.setattr(statistics, "_FIGURES_MEMO", {})
    scores = {("peer", str(s)): {f"T{t}": ((s * 7 + t * 3) % 11) / 10 for t in range(6)} for s in (1, 2, 3)}
    nudged = {k: dict(v) for k, v in scores.items()}
    nudged[("peer", "2")]["T4"] = math.nextafter(nudged[("peer", "2")]["T4"], 2.0)
    reordered = {k: dict(reversed(v.items())) for k, v in scores.items()}
    figures = [statistics._view_statistics(data, 7) for data in (scores, nudged, reordered)]
    assert figures[0] != figures[1] and figures[0] != figures[2]  # each input has figures of its own
    for data in (scores, nudged, reordered, scores):
        assert statistics.view_statistics(data, 7) == statistics._view_statistics(data, 7)
    assert len(statistics._FIGURES_MEMO) == 3
    for seed in range(statistics.FIGURES_MEMO_ENTRIES + 5):
        statistics.view_statistics(scores, seed)
    assert len(statistics._FIGURES_MEMO) == statistics.FIGURES_MEMO_ENTRIES


def test_newer_snapshot_is_never_overwritten(dataset):
    stored = snapshot(dataset)
    live = snapshots.fingerprint(dataset)
    older = stored.state_at - timedelta(seconds=5)
    assert snapshots.store(dataset.pk, {"old": True}, live, older) is False
    stored.refresh_from_db()
    assert "old" not in stored.data
    newer = stored.state_at + timedelta(seconds=5)
    assert snapshots.store(dataset.pk, {"new": True}, live, newer) is True
    stored.refresh_from_db()
    assert stored.data == {"new": True} and stored.state_at == newer


def test_a_slow_task_does_not_overwrite_a_faster_newer_one(dataset, monkeypatch):
    """Task A reads the state, task B reads a later state and stores first: A's write is refused."""
    snapshot(dataset)
    real_compute = snapshots.compute_payload

    def slow_compute(ds, live, previous=None):
        # While A computes, the data changes and B recomputes and stores.
        monkeypatch.setattr(snapshots, "compute_payload", real_compute)
        annotation = PeerAnnotation.objects.filter(peer__topic__dataset=ds).first()
        add_match(annotation, None, [(15, 19)])
        assert snapshots.recompute_dataset(ds.pk) is True
        return real_compute(ds, live, previous)

    monkeypatch.setattr(snapshots, "compute_payload", slow_compute)
    assert snapshots.recompute_dataset(dataset.pk) is False
    stored = DatasetDashboard.objects.get(dataset=dataset)
    assert snapshots.is_current(stored)  # B's snapshot, from the newer state


def test_current_follows_the_live_state(dataset):
    stored = snapshot(dataset)
    assert snapshots.is_current(stored)
    Assignment.objects.create(
        topic=dataset.topics.first(), annotator=PeerAnnotation.objects.first().annotator, task="build_pyramid"
    )
    assert snapshots.is_current(stored)  # assignments are read live by the overview, not stored
    t1 = Topic.objects.get(dataset=dataset, external_id="T1")
    # An empty annotation bumps no revision but adds a score row.
    peer = PeerSummary.objects.get(topic=t1, external_id="2")
    annotation = PeerAnnotation.objects.create(peer=peer, pyramid=t1.pyramids.get(), annotator=None)
    assert not snapshots.is_current(stored)
    stored = snapshot(dataset)
    assert snapshots.is_current(stored)
    add_match(annotation, None, [(0, 4)])  # a revision bump
    assert not snapshots.is_current(stored)
    stored = snapshot(dataset)
    import_judgments_csv(dataset, "topic,summary,metric,value\nT1,2,content,1\n")  # a judgment changed
    assert not snapshots.is_current(stored)
    stored = snapshot(dataset)
    assert snapshots.stale_datasets() == []


def test_saving_an_annotation_updates_the_dashboard(dataset, django_capture_on_commit_callbacks):
    """The whole chain in-process: save -> scores and agreement at once; the dashboard turns stale and
    is recomputed when looked at (what status.json does), so edits never wait for a dashboard."""
    before = snapshot(dataset)
    t2 = Topic.objects.get(dataset=dataset, external_id="T2")
    annotation = PeerAnnotation.objects.get(peer__topic=t2, peer__external_id="3")
    # The fixture's saves registered a pending set in the test's transaction; start a fresh one so
    # this save's callback is registered (and captured) inside the block, as in a real request.
    connection._pyramid_score_pending = None
    with django_capture_on_commit_callbacks(execute=True):
        add_match(annotation, SCU.objects.get(pyramid=annotation.pyramid, uid=1), [(10, 14)])
    assert not snapshots.is_current(DatasetDashboard.objects.get(dataset=dataset))
    snapshots.schedule([dataset.pk])
    after = DatasetDashboard.objects.get(dataset=dataset)
    assert after.computed_at > before.computed_at and snapshots.is_current(after)
    row = next(r for r in after.data["conventions"]["nist"]["per_topic"] if (r["topic"], r["summary"]) == ("T2", "3"))
    assert row["modified"] == pytest.approx(4 / 5)  # SCU 3 (1) + SCU 1 (3) = 4 of MaxWeight 5


def test_recompute_topics_schedules_the_dashboards_only_with_workers(dataset, monkeypatch, settings):
    """... and after a countdown: the saves of a burst publish one, and no score waits behind a dashboard per save."""
    from pyramid_app.celery import app

    sent = []
    monkeypatch.setattr(app, "send_task", lambda name, args, **kw: sent.append((name, args, kw.get("countdown"))))
    recompute_topics(list(dataset.topics.values_list("id", flat=True)))
    assert sent == []  # in-process: no dashboard work on the saver's time
    app.conf.task_always_eager = (
        False  # as with workers (restored: Celery's settings object is no plain attribute holder)
    )
    try:
        recompute_topics(list(dataset.topics.values_list("id", flat=True)))
    finally:
        app.conf.task_always_eager = True
    assert sent == [
        ("annotation.recompute_dashboards", [[dataset.pk]], settings.DASHBOARD_DEBOUNCE_SECONDS)
    ]  # sent by name
    assert settings.DASHBOARD_DEBOUNCE_SECONDS > 0


def test_worker_catch_up_task(dataset):
    from annotation.dashboards.tasks import recompute_stale_dashboards

    assert recompute_stale_dashboards.apply().get() == 1
    assert snapshots.stale_datasets() == []


def test_export_commands_agree_with_the_snapshot(dataset, tmp_path):
    """The CSV the scores page offers is exactly what export_scores writes (same rows, same keys)."""
    from io import StringIO

    from annotation.peers.results import SCORE_KEYS, write_rows

    out = StringIO()
    call_command("export_scores", dataset="Toy", format="csv", stdout=out)
    mine = StringIO()
    write_rows(mine, snapshot(dataset).data["conventions"]["nist"]["per_topic"], SCORE_KEYS, "csv")
    assert mine.getvalue() == out.getvalue()


def test_a_snapshot_is_decoded_once_per_process_and_a_newer_one_never_served_stale(dataset, monkeypatch):
    """``DatasetDashboard.data`` keeps each stored payload decoded for the process, keyed by the
    snapshot and its computed_at: reading the same snapshot again decodes nothing (nor reads the
    payload: the pages defer it), and a newer payload stored under the same row is decoded afresh.
    A key without computed_at (the row alone) would serve the older figures here."""
    from annotation.dashboards import models as dashboard_models

    snapshot(dataset)
    decoded = []

    class CountingJson:
        @staticmethod
        def loads(text):
            decoded.append(len(text))
            return json.loads(text)

    monkeypatch.setattr(dashboard_models, "json", CountingJson)
    first, _ = snapshots.snapshot_for(dataset)
    figures = first.data
    assert len(decoded) == 1
    again, _ = snapshots.snapshot_for(dataset)
    assert "payload" in again.get_deferred_fields()
    assert again.data is figures and len(decoded) == 1, "decoded once, shared by the next request"
    assert "payload" in again.get_deferred_fields(), "a decoded payload is not even read again"

    newer = {**figures, "judgments": {"marker": 1}}
    assert snapshots.store(dataset.pk, newer, first.fingerprint, first.state_at + timedelta(seconds=1))
    latest, _ = snapshots.snapshot_for(dataset)
    assert latest.pk == first.pk and latest.computed_at != first.computed_at
    assert latest.data["judgments"] == {"marker": 1} and len(decoded) == 2

    # In a process that has not decoded it yet, a row read before a newer payload was stored and
    # whose payload is read after: the payload read is the newer one, kept under the computed_at
    # read with it (never under the older one, which a request holding it would then be served).
    monkeypatch.setattr(dashboard_models, "_decoded", Kept(dashboard_models.DECODED_SNAPSHOTS))
    row = DatasetDashboard.objects.defer("payload").get(pk=first.pk)
    assert snapshots.store(
        dataset.pk, {**figures, "judgments": {"marker": 2}}, first.fingerprint, first.state_at + timedelta(seconds=2)
    )
    assert row.data["judgments"] == {"marker": 2} and len(decoded) == 3
    assert row.computed_at == DatasetDashboard.objects.get(pk=first.pk).computed_at != latest.computed_at
    assert snapshots.snapshot_for(dataset)[0].data["judgments"] == {"marker": 2} and len(decoded) == 3


def test_the_decoded_snapshots_of_a_process_are_bounded(monkeypatch):
    """At most DECODED_SNAPSHOTS datasets' payloads stay decoded (the least recently read leaves), and
    a snapshot's newer payload replaces its older one rather than adding to them."""
    from django.utils import timezone

    from annotation.dashboards import models as dashboard_models

    kept = Kept(2)
    monkeypatch.setattr(dashboard_models, "_decoded", kept)
    now = timezone.now()
    for pk in (1, 2, 3):
        assert DatasetDashboard(pk=pk, payload=f'{{"pk": {pk}}}', computed_at=now).data == {"pk": pk}
    assert [pk for pk in (1, 2, 3) if pk in kept] == [2, 3]
    assert DatasetDashboard(pk=2, payload="not read again", computed_at=now).data == {"pk": 2}
    newer = DatasetDashboard(pk=3, payload='{"pk": 3, "newer": true}', computed_at=now + timedelta(seconds=1))
    assert newer.data == {"pk": 3, "newer": True}
    assert [pk for pk in (1, 2, 3) if pk in kept] == [2, 3] and kept.get(3)[0] == newer.computed_at
    assert DatasetDashboard(pk=1, payload='{"pk": 1}', computed_at=now).data == {"pk": 1}
    assert [pk for pk in (1, 2, 3) if pk in kept] == [1, 3], "2 was read before 3's newer payload: it leaves first"


def test_a_difference_of_exactly_the_noise_is_flagged_alike_for_every_peer(dataset, monkeypatch):
    """|0.56 - 0.50| and |0.36 - 0.30| are both 3/50 (0.06000000000000005 and 0.06 as floats): no
    peer is flagged for either; 0.57 vs 0.50 is (``scoring.correlation.above_noise``)."""
    import dataclasses

    wanted = {"1": (0.56, 0.50), "2": (0.36, 0.30), "3": (0.57, 0.50)}  # T1's peers: (ann1, ann2)
    real = snapshots.score_annotations

    def scored(annotations, convention):
        annotations = list(annotations)
        out = real(annotations, convention)
        for a in annotations:
            if a.topic == "T1":
                value = wanted[a.peer][0 if a.annotator == "ann1" else 1]
                out[a.pk] = dataclasses.replace(out[a.pk], modified=value)
        return out

    monkeypatch.setattr(snapshots, "score_annotations", scored)
    detail = snapshot(dataset).data["conventions"]["nist"]["agreement_details"]["T1"]
    assert {p["peer"]: p["flagged"] for p in detail["peers"]} == {"1": False, "2": False, "3": True}
    assert detail["flagged"] == 1


def test_a_dashboard_nobody_looks_at_waits_for_a_quiet_spell(db, monkeypatch, settings):
    """Issue 33: with workers, a stale dashboard nobody looked at lately is recomputed once its data
    has stayed unchanged for ``DASHBOARD_QUIET_SECONDS``, not while an annotator goes on saving;
    one being looked at, one never computed, one older than ``DASHBOARD_UNWATCHED_SECONDS`` at once."""
    settings.DASHBOARD_QUIET_SECONDS, settings.DASHBOARD_UNWATCHED_SECONDS = 15, 600
    dataset = build_toy()
    snapshots.recompute_dataset(dataset.pk)
    monkeypatch.setattr(queue, "in_process", lambda: False)  # as with workers
    start = time.time() + 1  # after the snapshot was computed
    clock = SimpleNamespace(time=lambda: start)
    monkeypatch.setattr(snapshots, "time", clock)
    annotation = PeerAnnotation.objects.filter(peer__topic__dataset=dataset).first()
    scu = SCU.objects.get(pyramid=annotation.pyramid, uid=1)

    def due() -> tuple[list[int], list[int]]:
        found = {}
        return snapshots._due_now(snapshots.stale_among([dataset.pk], found), found)

    assert due() == ([], [])  # current: nothing to do
    cache.add(snapshots.MARKS_KEPT_KEY, 1, timeout=None)  # the cache has kept its marks (below: lost)
    add_match(annotation, scu, [(0, 3)])
    assert due() == ([], [dataset.pk])  # just changed: it waits
    clock.time = lambda: start + 10
    assert due() == ([], [dataset.pk])  # unchanged for 10 s only
    add_match(annotation, scu, [(4, 7)])  # the annotator saves again
    clock.time = lambda: start + 20
    assert due() == ([], [dataset.pk])  # changed since it was last seen: it waits again
    clock.time = lambda: start + 34.5
    assert due() == ([dataset.pk], [])  # unchanged for 14.5 s (a countdown ends a little early): now
    add_match(annotation, scu, [(8, 11)])
    assert due() == ([], [dataset.pk])
    snapshots.note_watched(dataset.pk)  # a coordinator opens a page of it
    assert due() == ([dataset.pk], [])
    cache.delete(snapshots._watched_key(dataset.pk))
    settings.DASHBOARD_UNWATCHED_SECONDS = 0  # stale for longer than the longest wait
    assert due() == ([dataset.pk], [])
    settings.DASHBOARD_UNWATCHED_SECONDS = 600
    add_match(annotation, scu, [(12, 15)])
    assert due() == ([], [dataset.pk])
    cache.clear()  # Redis restarted empty: the marks of when the data was seen are gone
    assert due() == ([dataset.pk], [])  # how long it has been quiet is unknown: not put off, once
    add_match(annotation, scu, [(16, 19)])
    assert due() == ([], [dataset.pk])  # the marks are kept again: the next change waits
    monkeypatch.setattr(queue, "in_process", lambda: True)  # no workers: nothing is spaced
    assert due() == ([dataset.pk], [])
    DatasetDashboard.objects.filter(dataset=dataset).delete()
    monkeypatch.setattr(queue, "in_process", lambda: False)
    assert due() == ([dataset.pk], [])  # the first snapshot is never put off


def test_a_dashboard_put_off_is_looked_at_again_by_one_message(db, monkeypatch, settings):
    """Two runs putting the same dataset off (its own message and one the agreement published while
    it ran) publish one look again, not two chains of looks that never merge."""
    settings.DASHBOARD_QUIET_SECONDS = 15
    sent = []
    monkeypatch.setattr(queue, "dispatch", lambda kind, ids, delay=None: sent.append((kind, list(ids), delay)))
    snapshots._look_again([7])
    snapshots._look_again([7, 8])
    assert sent == [("dashboard", [7], 15), ("dashboard", [8], 15)]
    cache.delete("dashboard:look:7")  # the look is due: its mark has expired
    snapshots._look_again([7])
    assert sent[-1] == ("dashboard", [7], 15)

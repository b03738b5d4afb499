"""Saving anything that changes a score recomputes it after the commit, once per burst, never
letting an older result overwrite a newer one, and surviving a broker outage."""

import threading
import time
from unittest import mock

import pytest
from celery.signals import task_postrun
from django.db.models import F
from kombu.exceptions import OperationalError

from annotation.corpus.models import Topic
from annotation.peers import recompute
from annotation.peers.demo import load_demo
from annotation.peers.editing import add_match
from annotation.peers.models import AnnotationScore, PeerAnnotation, TopicAgreement
from annotation.peers.recompute import _store_scores, recompute_annotations
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid
from scoring.model import Convention


def scores_of(annotation, convention="nist"):
    return AnnotationScore.objects.filter(annotation=annotation, convention=convention).first()


def wait_until(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.fixture
def demo_annotation(transactional_db):
    load_demo()
    return PeerAnnotation.objects.get(annotator__username="bob", peer__external_id="2")


def _store_score(annotation_id, convention, revisions, values) -> bool:
    return _store_scores([(annotation_id, convention, revisions, values)]) == 1


def test_an_older_result_never_overwrites_a_newer_one(demo_annotation):
    a = demo_annotation
    assert _store_score(a.pk, "test", (5, 5), {"modified": "new"})
    assert not _store_score(a.pk, "test", (4, 9), {"modified": "older pyramid"})
    assert not _store_score(a.pk, "test", (9, 4), {"modified": "older annotation"})
    assert AnnotationScore.objects.get(annotation=a, convention="test").values == {"modified": "new"}
    assert _store_score(a.pk, "test", (5, 6), {"modified": "newer"})
    assert AnnotationScore.objects.get(annotation=a, convention="test").values == {"modified": "newer"}


def test_eager_mode_recomputes_on_every_commit(in_process_jobs, demo_annotation):
    """Without a broker (the embedded default) tasks run in-process right after the commit (also
    checked where REDIS_URL is set, CI: the worker tests below cover the broker's path)."""
    a = demo_annotation
    before = scores_of(a).values["modified"]
    add_match(a, SCU.objects.get(pyramid=a.pyramid, uid=3), [(36, 68)])  # "It had been closed because of rust"
    after = scores_of(a)
    assert after.is_current and after.values["modified"] == pytest.approx(before + 3 / 15)


def test_changing_the_pyramid_restales_every_annotation_against_it(in_process_jobs, demo_annotation):
    a = demo_annotation
    reference_d = a.pyramid.references.get(external_id="D")
    scu8 = SCU.objects.get(pyramid=a.pyramid, uid=8)
    add_contributor(scu8, reference_d, [(0, 20)])  # weight of SCU 8: 1 -> 2; sum 20 -> Xa = 5
    for annotation in PeerAnnotation.objects.filter(pyramid=a.pyramid):
        assert scores_of(annotation).is_current
    assert scores_of(a).values["observed_weight"] == 4 + 2  # SCUs 1 and 8


@pytest.fixture
def task_log():
    """(task name, args) of every task a worker runs in this process."""
    runs, lock = [], threading.Lock()

    def record(sender=None, args=None, **kwargs):
        with lock:
            runs.append((sender.name, list(args or [])))

    task_postrun.connect(record, weak=False)
    yield runs
    task_postrun.disconnect(record)


@pytest.mark.worker
def test_a_burst_of_saves_costs_one_recomputation(celery_worker, demo_annotation, task_log, settings):
    settings.SCORE_DEBOUNCE_SECONDS = 1.0
    a = demo_annotation
    assert wait_until(lambda: scores_of(a) is not None and scores_of(a).is_current)
    task_log.clear()
    scu5 = SCU.objects.get(pyramid=a.pyramid, uid=5)
    for _ in range(8):  # eight separate transactions in quick succession
        add_match(a, scu5, [(0, 7)])
    assert wait_until(lambda: scores_of(a).is_current)
    runs = [args for name, args in task_log if name == "annotation.recompute_scores" and a.pk in args[0]]
    assert 1 <= len(runs) <= 2, runs
    # 1 distinct SCU more (weight 2), 7 repetitions: D = 5 + 2.
    assert scores_of(a).values["observed_weight"] == 7 and scores_of(a).values["repetitions"] == 7
    assert wait_until(lambda: TopicAgreement.objects.get(topic=a.peer.topic).is_current)


@pytest.mark.worker
def test_broker_down_save_succeeds_then_a_worker_catches_up(transactional_db, settings, django_db_blocker):
    from celery.contrib.testing.worker import start_worker

    from pyramid_app.celery import app

    assert settings.REDIS_URL, "guarded by the worker marker"
    load_demo()  # scores queued; no worker yet
    a = PeerAnnotation.objects.get(annotator__username="bob", peer__external_id="2")
    with mock.patch.object(app, "send_task", side_effect=OperationalError("broker down")):
        add_match(a, SCU.objects.get(pyramid=a.pyramid, uid=3), [(36, 68)])  # the save itself succeeds
    assert a.matches.count() == 4
    assert scores_of(a) is None or not scores_of(a).is_current, "a score computed before the save must show as stale"
    with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=10):
        assert wait_until(lambda: scores_of(a) is not None and scores_of(a).is_current)
    assert scores_of(a).values["matched_scus"] == 3  # SCUs 1, 3, 8


def test_recompute_writes_only_what_is_stale(demo_annotation):
    a = demo_annotation
    others = list(PeerAnnotation.objects.filter(pyramid=a.pyramid).exclude(pk=a.pk).values_list("id", flat=True))
    everyone = [a.pk, *others]
    recompute_annotations(everyone)
    assert recompute_annotations(everyone) == 0  # all current: nothing recomputed
    AnnotationScore.objects.filter(annotation=a, convention="sacrerouge").delete()
    assert recompute_annotations(everyone) == 2 and scores_of(a, "sacrerouge").is_current  # a alone, both conventions
    PeerAnnotation.objects.filter(pk=a.pk).update(revision=a.revision + 5)  # as an edit of a alone does
    assert recompute_annotations(everyone) == 2  # a's two conventions, not the others'
    assert scores_of(a).is_current and all(
        scores_of(o).is_current for o in PeerAnnotation.objects.filter(pk__in=others)
    )


def test_stored_scores_equal_a_fresh_computation_while_pyramids_are_kept_prepared(demo_annotation):
    """Recomputation keeps each pyramid prepared between edits (``prepared_pyramids``). After an edit
    of an annotation (served by the kept pyramid), of the pyramid, and a renamed reference (which
    bumps no revision: the kept pyramid must not name it the old way), what is stored equals what
    a fresh computation gives, value for value."""
    from annotation.corpus.models import ReferenceSummary
    from annotation.peers.results import score_annotations
    from scoring.model import Convention

    a = demo_annotation
    everyone = list(PeerAnnotation.objects.filter(pyramid=a.pyramid))

    def assert_stored_equal_fresh(annotations):
        recompute_annotations([x.pk for x in everyone])
        for convention in Convention:
            fresh = {pk: score.as_dict() for pk, score in score_annotations(annotations, convention).items()}
            stored = {
                s.annotation_id: s.values
                for s in AnnotationScore.objects.filter(annotation__in=annotations, convention=convention.value)
            }
            assert stored == fresh and len(stored) == len(annotations)

    assert_stored_equal_fresh(everyone)
    add_match(a, SCU.objects.get(pyramid=a.pyramid, uid=3), [(36, 68)])
    assert_stored_equal_fresh(everyone)
    scu = SCU.objects.get(pyramid=a.pyramid, uid=3)
    missing = a.pyramid.references.exclude(contributors__scu=scu).first()
    add_contributor(scu, missing, [(0, 3)])
    assert_stored_equal_fresh(everyone)
    ReferenceSummary.objects.filter(pk=missing.pk).update(external_id="Z")
    add_match(a, None, [(0, 3)])
    assert_stored_equal_fresh([PeerAnnotation.objects.get(pk=a.pk)])
    jackknifed = AnnotationScore.objects.get(annotation=a, convention="nist").values["jackknife"]
    assert "Z" in {ref for ref, _ in jackknifed}


def test_results_of_an_annotation_deleted_meanwhile_are_dropped_and_the_others_stored(demo_annotation):
    from annotation.peers.recompute import _store_scores

    gone = PeerAnnotation.objects.exclude(pk=demo_annotation.pk).first()
    gone_id = gone.pk
    gone.delete()  # after its scores were computed, before they are stored
    assert _store_scores([(demo_annotation.pk, "test", (1, 1), {"x": 1}), (gone_id, "test", (1, 1), {"x": 2})]) == 1
    assert list(AnnotationScore.objects.filter(convention="test").values_list("annotation_id", flat=True)) == [
        demo_annotation.pk
    ]


def test_a_reference_added_to_or_removed_from_the_pyramid_or_renamed_restales_its_scores(demo_annotation):
    """n (the number of references) sets Xa, and each reference names its jackknife pyramid: adding
    one to the pyramid, taking one out, or renaming one must never leave the old values marked
    current (stale until recomputed, or recomputed at once in eager mode)."""
    from annotation.corpus.models import ReferenceSummary
    from annotation.peers.results import score_annotations
    from annotation.pyramids.models import Pyramid
    from scoring.model import Convention

    a = demo_annotation
    everyone = [x.pk for x in PeerAnnotation.objects.filter(pyramid=a.pyramid)]
    recompute_annotations(everyone)
    before = scores_of(a).values

    def fresh():
        return score_annotations([PeerAnnotation.objects.get(pk=a.pk)], Convention.NIST)[a.pk].as_dict()

    def never_current_with_old_values():
        stored = scores_of(a)
        assert not stored.is_current or stored.values == fresh()
        recompute_annotations(everyone)
        stored = scores_of(a)
        assert stored.is_current and stored.values == fresh()
        return stored.values

    def jackknifed(values):
        return {ref for ref, _ in values["jackknife"]}

    revision = Pyramid.objects.get(pk=a.pyramid_id).revision
    extra = ReferenceSummary.objects.create(topic=a.pyramid.topic, external_id="E", text="A fifth reference.")
    assert Pyramid.objects.get(pk=a.pyramid_id).revision == revision  # in no pyramid yet: nothing stale
    a.pyramid.references.add(extra)
    added = never_current_with_old_values()
    assert added["xa"] != before["xa"] and "E" in jackknifed(added)

    extra.external_id = "Renamed"
    extra.save()
    assert "Renamed" in jackknifed(never_current_with_old_values())

    extra.pyramids.remove(a.pyramid)  # from the reference's side
    removed = never_current_with_old_values()
    assert removed["xa"] == before["xa"] and jackknifed(removed) == jackknifed(before)


def _stale_by_reading_every_row() -> tuple[list[int], list[int]]:
    """The sweep's answer computed the long way, row by row in Python (what ``stale_work`` did
    before it asked the database for the stale ids only)."""
    stored = {
        (a, c): (p, r)
        for a, c, p, r in AnnotationScore.objects.values_list(
            "annotation_id", "convention", "pyramid_revision", "annotation_revision"
        )
    }
    annotations = sorted(
        pk
        for pk, a_rev, p_rev in PeerAnnotation.objects.values_list("id", "revision", "pyramid__revision")
        if any(stored.get((pk, c.value)) != (p_rev, a_rev) for c in Convention)
    )
    agreed = dict(TopicAgreement.objects.values_list("topic_id", "topic_revision"))
    topics = sorted(
        {pk for pk, rev in Topic.objects.filter(pyramids__annotations__isnull=False).values_list("id", "revision")}
        - {pk for pk, rev in Topic.objects.values_list("id", "revision") if agreed.get(pk) == rev}
    )
    return annotations, topics


def test_the_sweep_finds_exactly_the_stale_scores_and_agreement(in_process_jobs, demo_annotation):
    """``stale_work`` (beat's sweep) lists what lags behind, in each way a result can: an
    annotation edited, a pyramid edited (every annotation against it), a score row lost (one
    convention only), an agreement lost or behind its topic; and nothing once all is current."""
    assert recompute.stale_work() == ([], []) == _stale_by_reading_every_row()
    a = demo_annotation
    lost_one_convention = PeerAnnotation.objects.exclude(pk=a.pk).order_by("pk").first()
    PeerAnnotation.objects.filter(pk=a.pk).update(revision=F("revision") + 1)
    AnnotationScore.objects.filter(annotation=lost_one_convention, convention=Convention.NIST.value).delete()
    TopicAgreement.objects.filter(topic=a.pyramid.topic).update(topic_revision=F("topic_revision") - 1)
    found = recompute.stale_work()
    assert found == _stale_by_reading_every_row()
    assert found == (sorted([a.pk, lost_one_convention.pk]), [a.pyramid.topic_id])
    TopicAgreement.objects.filter(topic=a.pyramid.topic).delete()
    assert recompute.stale_work()[1] == [a.pyramid.topic_id]
    recompute.recompute_annotations(found[0])
    recompute.recompute_topics(found[1])
    assert recompute.stale_work() == ([], [])
    Pyramid.objects.filter(pk=a.pyramid_id).update(revision=F("revision") + 1)
    against = sorted(PeerAnnotation.objects.filter(pyramid=a.pyramid).values_list("pk", flat=True))
    assert recompute.stale_work() == (against, []) == _stale_by_reading_every_row()
    recompute.recompute_annotations(against)
    assert recompute.stale_work() == ([], []) == _stale_by_reading_every_row()

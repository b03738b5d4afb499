"""Every background job computes again only what changed since its last completed run
(``annotation/jobs/queue.py`` JOBS, ``queue.start``): however often a message is delivered (kombu
delivers an unacknowledged one again every visibility timeout, and a worker at ``--concurrency=1``
runs the copy after the first run finished), and whichever message names unchanged work, the second
call computes nothing; a change computes again, only what it changed. With workers, a copy of a
finished job is acknowledged, not published again to wait for its spacing."""

import pytest
from django.utils.module_loading import import_string

from annotation.dashboards import snapshots
from annotation.dashboards.models import DatasetDashboard
from annotation.jobs import queue
from annotation.lightweight import scores
from annotation.lightweight.runs import touch
from annotation.lightweight.tasks import recompute_stale_lightweight
from annotation.peers import recompute
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids import automatic_peer_scores, construction
from annotation.pyramids.editing import add_part
from annotation.pyramids.models import SCU, Contributor, Pyramid

from tests.dashboards.helpers import build_toy, second_pyramid
from tests.lightweight.world import small_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(in_process_jobs):
    dataset = build_toy()
    t1 = dataset.topics.get(external_id="T1")
    second_pyramid(t1, "ann6")  # two pyramids of T1: its construction agreement is computed
    return {"dataset": dataset, "t1": t1, "run": small_run()}


def _annotation(world) -> PeerAnnotation:
    return PeerAnnotation.objects.filter(pyramid__topic=world["t1"]).order_by("pk").first()


def _match(world) -> None:
    annotation = _annotation(world)
    add_match(annotation, SCU.objects.filter(pyramid=annotation.pyramid).order_by("pk").last(), [(0, 3)])


def _pyramid_edit(world) -> None:
    contributor = Contributor.objects.filter(scu__pyramid=_annotation(world).pyramid).order_by("pk").first()
    add_part(contributor, 0, 2)


def _annotations_of_t1(world) -> list[int]:
    return list(PeerAnnotation.objects.filter(pyramid__topic=world["t1"]).values_list("pk", flat=True))


def _topics(world) -> list[int]:
    return list(world["dataset"].topics.values_list("pk", flat=True))


def _pyramids(world) -> list[int]:
    return list(Pyramid.objects.filter(topic__dataset=world["dataset"]).values_list("pk", flat=True))


# kind -> (module and function that computes (spied: each call's key recorded), the key of one call,
# the ids the job is given, a change, the keys a run after the change computes)
CASES = {
    "pyramid": (recompute, "score_prepared", lambda pyramid, inputs: id(inputs), _pyramids, _pyramid_edit, None),
    "annotation": (recompute, "score_prepared", lambda pyramid, inputs: id(inputs), _annotations_of_t1, _match, None),
    "topic": (
        recompute,
        "agreement_rows_by_convention",
        lambda topics, _: tuple(t.external_id for t in topics),
        _topics,
        _match,
        [("T1",)],
    ),
    "construction": (construction, "compute", lambda topic, previous=None: topic.external_id, _topics, _match, ["T1"]),
    "automatic": (automatic_peer_scores, "compute", lambda pyramid: pyramid.pk, _pyramids, _match, "pyramids of T1"),
    "lightweight": (
        scores,
        "compute",
        lambda run, settings=None, verified_only=None: run.pk,
        lambda w: [w["run"].pk],
        lambda w: touch(w["run"]),
        "run",
    ),
    "dashboard": (
        snapshots,
        "compute_payload",
        lambda dataset, live, previous=None: dataset.name,
        lambda w: [w["dataset"].pk],
        _match,
        ["Toy"],
    ),
}


def spy(monkeypatch, module, name, key) -> list:
    calls, real = [], getattr(module, name)

    def recorded(*args, **kwargs):
        calls.append(key(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, recorded)
    return calls


def unpublished(monkeypatch):
    """Saves publish nothing: the job is called by the test, as a worker would."""
    monkeypatch.setattr(queue, "publish", lambda kind, ids: None)


def test_every_job_kind_has_a_case():
    assert set(CASES) == set(queue.JOBS)


@pytest.mark.parametrize("kind", list(queue.JOBS))
def test_a_job_computes_nothing_until_what_it_reads_changes(kind, world, monkeypatch):
    module, name, key, ids_of, change, expected = CASES[kind]
    work, ids = import_string(queue.JOBS[kind].work), ids_of(world)
    calls = spy(monkeypatch, module, name, key)
    work(ids)  # whatever was left stale is computed
    calls.clear()
    work(ids)  # a copy of the same message, or another one naming the same work
    assert calls == [], f"{kind}: computed again with nothing changed"
    unpublished(monkeypatch)
    change(world)
    work(ids)
    assert calls, f"{kind}: a change was not computed"
    if expected == "pyramids of T1":
        expected = sorted(world["t1"].pyramids.values_list("pk", flat=True))
        assert sorted(calls) == expected
    elif expected == "run":
        assert calls == [world["run"].pk]
    elif expected is not None:
        assert calls == expected
    else:  # one annotation (an annotation's edit) or every annotation of the edited pyramid, both conventions
        pyramid = _annotation(world).pyramid
        edited = 1 if kind == "annotation" else PeerAnnotation.objects.filter(pyramid=pyramid).count()
        assert len(calls) == 2 * edited
    calls.clear()
    work(ids)
    assert calls == [], f"{kind}: computed the same change twice"


def test_a_lightweight_setting_changed_without_a_new_revision_is_computed_again(world, monkeypatch):
    run = world["run"]
    calls = spy(monkeypatch, scores, "compute", lambda run, settings=None, verified_only=None: settings)
    scores.recompute_runs([run.pk])
    calls.clear()
    type(run).objects.filter(pk=run.pk).update(threshold=0.9)  # e.g. an admin's edit: no revision bumped
    published = []
    monkeypatch.setattr(queue, "publish", lambda kind, ids: published.append((kind, list(ids))))
    assert recompute_stale_lightweight() == 1 and published == [("lightweight", [run.pk])]  # the sweep finds it
    scores.recompute_runs([run.pk])
    assert [s.threshold for s in calls] == [0.9]
    result, current = scores.stored(type(run).objects.get(pk=run.pk))
    assert current and result is not None


def test_a_dashboard_is_computed_again_when_the_resamples_change(world, monkeypatch, settings):
    """The intervals' resamples are a setting: a snapshot computed with others is not current."""
    dataset = world["dataset"]
    snapshots.recompute_datasets([dataset.pk])
    calls = spy(monkeypatch, snapshots, "compute_payload", lambda dataset, live, previous=None: dataset.name)
    settings.METAEVAL_RESAMPLES = 40
    snapshots.recompute_datasets([dataset.pk])
    assert calls == ["Toy"]
    assert DatasetDashboard.objects.get(dataset=dataset).fingerprint["resamples"] == 40


SPACED = [kind for kind in queue.JOBS if queue.JOBS[kind].spacing and queue.JOBS[kind].task]


@pytest.fixture
def with_workers(world):
    """As with workers (not eager): spacing applies and messages are sent (recorded here)."""
    from pyramid_app.celery import app

    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    yield
    app.conf.task_always_eager = eager


@pytest.mark.redis
@pytest.mark.parametrize("kind", SPACED)
def test_a_copy_of_a_finished_spaced_job_is_not_published_again(kind, world, monkeypatch):
    """Its currency is tested before its spacing: a copy of a finished job (delivered again at once,
    well within ``spacing``) computes nothing and sends nothing, where it was put off and published
    again, to run in full once the spacing had passed (issue 31's loop). A real change within the
    spacing is still put off, once."""
    from pyramid_app.celery import app

    module, name, key, ids_of, change, _ = CASES[kind]
    work, ids = import_string(queue.JOBS[kind].work), ids_of(world)
    work(ids)  # eager: everything current
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    sent = []
    monkeypatch.setattr(app, "send_task", lambda task, args, countdown=None: sent.append((task, args[0])))
    try:
        calls = spy(monkeypatch, module, name, key)
        queue.note_start(kind, ids)  # the run that just finished
        work(ids)  # its copy
        own = queue.JOBS[kind].task  # (the agreement's job also schedules the dashboards: they test their own state)
        assert calls == [] and [s for s in sent if s[0] == own] == []
        unpublished(monkeypatch)
        change(world)
        sent.clear()
        work(ids)
        t1 = [world["t1"].pk] if kind != "dashboard" else [world["dataset"].pk]
        assert calls == [] and [s for s in sent if s[0] == own] == [(own, t1)]
    finally:
        app.conf.task_always_eager = eager
        queue.release(kind, ids)

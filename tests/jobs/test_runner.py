"""The in-process background runner (no REDIS_URL): saves never wait for scoring, bursts coalesce,
an idle runner starts at once, failures are contained, and the results equal a fresh computation."""

import threading
import time

import pytest

from annotation.jobs.runner import Runner
from annotation.peers import recompute
from annotation.peers.demo import load_demo
from annotation.peers.editing import add_match
from annotation.peers.models import AnnotationScore, PeerAnnotation, TopicAgreement
from annotation.peers.results import score_rows
from annotation.pyramids.models import SCU


class Recorder:
    def __init__(self, block_first=False):
        self.calls, self.started = [], []
        self.release = threading.Event()
        if not block_first:
            self.release.set()

    def __call__(self, kind, ids):
        self.started.append(time.monotonic())
        self.calls.append((kind, ids, threading.current_thread().name))
        self.release.wait(10)


def test_a_burst_submitted_while_busy_runs_as_one_in_a_fixed_order():
    recorder = Recorder(block_first=True)
    runner = Runner(recorder)
    runner.submit("annotation", [1])
    deadline = time.monotonic() + 5
    while not recorder.calls and time.monotonic() < deadline:
        time.sleep(0.005)
    for ids in ([3], [2, 3], [4]):  # while the first burst runs
        runner.submit("annotation", ids)
    runner.submit("dashboard", [7])
    runner.submit("topic", [9])
    recorder.release.set()
    assert runner.wait(10)
    assert [(k, ids) for k, ids, _ in recorder.calls] == [
        ("annotation", [1]),
        ("annotation", [2, 3, 4]),
        ("topic", [9]),
        ("dashboard", [7]),
    ]
    assert {name for _, _, name in recorder.calls} == {"pyramid-background"}
    runner.stop()


def test_an_idle_runner_starts_at_once_and_survives_a_failing_task(caplog):
    def execute(kind, ids):
        started.append(time.monotonic())
        if ids == [1]:
            raise RuntimeError("boom")

    started, waits = [], []
    runner = Runner(execute)
    for ids in ([1], [2], [3], [4], [5]):
        submitted = time.monotonic()
        runner.submit("annotation", ids)
        assert runner.wait(10)
        waits.append(started[-1] - submitted)
    # No debounce wait (0.5 s before): a debounce delays every start by its wait, while a loaded
    # machine delays some; the quickest start of five is well under it.
    assert min(waits) < 0.25, waits
    assert "boom" in caplog.text and len(started) == 5
    runner.stop()


def test_the_sweep_runs_first_and_when_idle():
    events = []
    runner = Runner(lambda kind, ids: events.append("task"), sweep=lambda: events.append("sweep"), sweep_every=0.05)
    runner.submit("annotation", [1])
    deadline = time.monotonic() + 30
    while events.count("sweep") < 2 and time.monotonic() < deadline:  # the idle sweep, however slow the machine
        time.sleep(0.01)
    runner.stop()
    assert events[:2] == ["sweep", "task"] and events.count("sweep") >= 2, events


@pytest.fixture
def in_process(background_runner):
    """Tasks run in-process as without REDIS_URL (also when CI sets it)."""
    from pyramid_app.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield background_runner
    app.conf.task_always_eager = saved


def test_saves_return_before_scoring_and_the_runner_stores_fresh_scores(in_process, monkeypatch):
    runner = in_process
    load_demo()
    assert runner.wait(60)
    threads = []
    original = recompute.recompute_annotations
    # The task looks the service up when it runs, so this records the thread every recomputation runs in.
    monkeypatch.setattr(
        recompute, "recompute_annotations", lambda ids: threads.append(threading.current_thread().name) or original(ids)
    )

    a = PeerAnnotation.objects.get(annotator__username="bob", peer__external_id="2")
    for uid in (3, 5):
        add_match(a, SCU.objects.get(pyramid=a.pyramid, uid=uid), [(36, 68)] if uid == 3 else [(0, 7)])
    assert runner.wait(60)
    assert threads and set(threads) == {"pyramid-background"}, threads
    fresh = {
        (r["summary"], r["annotator"]): r
        for r in score_rows(a.pyramid.topic.dataset.topics.all(), include_references=False)
    }
    for annotation in PeerAnnotation.objects.all():
        stored = AnnotationScore.objects.get(annotation=annotation, convention="nist")
        assert stored.is_current
        assert stored.values["modified"] == pytest.approx(
            fresh[(annotation.peer.external_id, annotation.annotator.username)]["modified"]
        )
    assert TopicAgreement.objects.get(topic=a.pyramid.topic).is_current

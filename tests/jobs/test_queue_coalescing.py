"""Publishing work to the workers (annotation/jobs/queue.py): an id is sent once while it waits,
marked pending in one round trip to Redis, and a pyramid's edits coalesce into one rescoring of
its annotations after ``PYRAMID_SCORE_DELAY_SECONDS`` (bench/request_cpu.py measures the cost).
A mark whose message was lost blocks the sweep no longer than the broker takes to redeliver."""

import time

import pytest
from django.core.cache import cache

from annotation.jobs import queue
from annotation.peers.demo import load_demo
from annotation.peers.models import PeerAnnotation
from annotation.peers.recompute import publish_annotations_of
from annotation.pyramids.models import Pyramid

pytestmark = pytest.mark.redis


@pytest.fixture
def sent(monkeypatch):
    """(task, ids, countdown) of every task published, as with workers (not eager: ``release`` then
    deletes the pending keys; in-process it has none to delete)."""
    from pyramid_app.celery import app

    published = []
    monkeypatch.setattr(
        app, "send_task", lambda name, args, **kw: published.append((name, args[0], kw.get("countdown")))
    )
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    yield published
    app.conf.task_always_eager = eager  # restored: Celery's settings object is no plain attribute holder
    # The pending keys claimed here name ids the next tests' annotations may have: left behind (for
    # their minute), they would keep those tests' work from being published.
    client = redis_client()
    for pattern in ("*pyramid:pending:*", "*pyramid:started:*"):
        for key in client.scan_iter(match=pattern):
            client.delete(key)


def redis_client():
    import redis
    from django.conf import settings

    return redis.Redis.from_url(settings.REDIS_URL)


def test_claim_marks_each_id_once_with_the_caches_own_expiring_key(sent):
    assert queue._claim("annotation", [1, 2, 3]) == [1, 2, 3]
    assert queue._claim("annotation", [2, 3, 4]) == [4]
    assert queue._claim("topic", [2]) == [2]  # kinds apart
    # The cache's own keys: the cache reads them, and release() deletes them.
    assert all(cache.get(queue._pending_key("annotation", pk)) for pk in (1, 2, 3, 4))
    ttl = redis_client().ttl(cache.make_and_validate_key(queue._pending_key("annotation", 1)))
    assert 0 < ttl <= queue.pending_ttl("annotation")
    queue.release("annotation", [2])
    assert queue._claim("annotation", [2, 3]) == [2]


def test_a_pyramids_edits_coalesce_into_one_delayed_rescoring(db, sent, settings):
    settings.PYRAMID_SCORE_DELAY_SECONDS, settings.PYRAMID_SCORE_SPACING_SECONDS = 2.5, 0
    settings.SCORE_DEBOUNCE_SECONDS = 0
    load_demo()
    pyramid = Pyramid.objects.filter(annotations__isnull=False).distinct().first()
    against = sorted(PeerAnnotation.objects.filter(pyramid=pyramid).values_list("id", flat=True))
    assert len(against) >= 2
    topic = [pyramid.topic_id]
    sent.clear()
    publish_annotations_of([pyramid.pk])  # an edit of the pyramid
    publish_annotations_of([pyramid.pk])  # the next edit, while the rescoring waits: nothing more
    # Its topic's agreement and construction agreement (one job) wait as long (they read the scores then stored).
    assert sent == [
        ("annotation.recompute_scores", against, 2.5),
        ("annotation.recompute_agreement", topic, 2.5),
    ]
    queue.dispatch("topic", topic)  # the same commit's own message for the topic: already waiting
    assert len(sent) == 2
    for kind, ids in (("annotation", against), ("topic", topic)):
        queue.release(kind, ids)  # the tasks started: a later edit is published anew
    publish_annotations_of([pyramid.pk])
    assert sent[2] == ("annotation.recompute_scores", against, 2.5)
    queue.release("annotation", against)
    queue.dispatch("annotation", against[:1])  # an annotation's own edit: rescored at once
    assert sent[-1] == ("annotation.recompute_scores", against[:1], None)


def test_a_busy_builders_edits_are_rescored_at_most_once_per_spacing(db, sent, settings):
    """The window grows with the edit rate: after a quiet spell an edit is rescored after the
    delay; while the builder goes on, the next rescoring waits for the spacing since the last."""
    settings.PYRAMID_SCORE_DELAY_SECONDS, settings.PYRAMID_SCORE_SPACING_SECONDS = 2, 10
    settings.SCORE_DEBOUNCE_SECONDS = 0
    load_demo()
    pyramid = Pyramid.objects.filter(annotations__isnull=False).distinct().first()
    against = sorted(PeerAnnotation.objects.filter(pyramid=pyramid).values_list("id", flat=True))
    sent.clear()
    publish_annotations_of([pyramid.pk])
    assert sent[0] == ("annotation.recompute_scores", against, 2)
    for kind, ids in (("annotation", against), ("topic", [pyramid.topic_id])):
        queue.release(kind, ids)  # that rescoring started
    sent.clear()
    publish_annotations_of([pyramid.pk])  # the builder's next edit, right after
    assert [(task, ids) for task, ids, _ in sent] == [
        ("annotation.recompute_scores", against),
        ("annotation.recompute_agreement", [pyramid.topic_id]),
    ]
    assert all(9 < countdown <= 12 for _, _, countdown in sent)  # 10 s after the last one was due, not 2
    # The pending marks outlive the longer countdown as they outlive the job's own (the broker's redelivery after it).
    ttl = redis_client().ttl(cache.make_and_validate_key(queue._pending_key("annotation", against[0])))
    assert ttl >= sent[0][2] + queue.pending_ttl("annotation") - 1
    assert queue.countdown("pyramid", [pyramid.pk + 1000], 2) == 2  # another pyramid keeps its own pace


def test_an_annotators_saves_are_rescored_at_once_and_their_topics_agreement_at_most_once_per_spacing(sent, settings):
    """An annotation's save publishes its own rescoring and its topic's agreement and construction
    agreement, one job (``recompute.schedule``). The annotator's score never waits; the topic's figures (each
    reads every annotation of the topic) start at once after a quiet spell, then at most once per
    ``AGREEMENT_SPACING_SECONDS``: every save of a match ran both, half the worker's CPU per save."""
    settings.SCORE_DEBOUNCE_SECONDS, settings.AGREEMENT_SPACING_SECONDS = 0, 10
    save = (("annotation", [5]), ("topic", [3]))
    for kind, ids in save:
        queue.dispatch(kind, ids)
    assert sent == [
        ("annotation.recompute_scores", [5], None),
        ("annotation.recompute_agreement", [3], None),
    ]
    assert queue.due("topic", [3]) == [3]
    for kind, ids in save:
        queue.release(kind, ids)  # the tasks started
    sent.clear()
    for kind, ids in save:  # the annotator's next save, right after
        queue.dispatch(kind, ids)
    assert sent[0] == ("annotation.recompute_scores", [5], None)  # its score at once
    assert [(task, ids) for task, ids, _ in sent[1:]] == [("annotation.recompute_agreement", [3])]
    assert all(9 < countdown <= 10 for _, _, countdown in sent[1:])  # 10 s after the last start
    for kind, ids in save[1:]:
        queue.dispatch(kind, ids)  # later saves meanwhile: the topic's figures are already waiting
    assert len(sent) == 2
    assert queue.dispatch("topic", [4]) == [4] and sent[-1] == (
        "annotation.recompute_agreement",
        [4],
        None,
    )  # another topic: its own pace
    settings.AGREEMENT_SPACING_SECONDS = 0  # no spacing: every save's agreement at once again
    queue.release("topic", [3])
    queue.dispatch("topic", [3])
    assert sent[-1] == ("annotation.recompute_agreement", [3], None)


def test_a_mark_lasts_as_long_as_its_message_may_go_unseen(settings):
    """The visibility timeout, kombu's restore interval and the job's countdown: not a fixed minute."""
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        "visibility_timeout": 20,
        "unacked_restore_interval": 5,
    }
    settings.SCORE_DEBOUNCE_SECONDS, settings.DASHBOARD_DEBOUNCE_SECONDS, settings.DASHBOARD_INTERVAL_SECONDS = (
        0,
        4.5,
        8,
    )
    assert (queue.pending_ttl("annotation"), queue.pending_ttl("dashboard")) == (
        25,
        33,
    )  # a dashboard may wait its interval
    settings.DASHBOARD_INTERVAL_SECONDS = 60
    assert (
        queue.pending_ttl("dashboard") == 35
    )  # ... never more than the longest countdown (half the visibility timeout)


def test_a_datasets_dashboard_starts_at_most_once_per_interval(sent, settings):
    """While edits go on, each burst publishes the dashboard again as soon as its last run started;
    it then waits for the rest of ``DASHBOARD_INTERVAL_SECONDS`` since that start, not just the
    debounce (20 editors started one every 5 s: most of the worker's CPU per write). A countdown
    stays within half the visibility timeout (a message held longer is delivered twice): the task
    puts off what is not yet due and publishes it again."""
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {**settings.CELERY_BROKER_TRANSPORT_OPTIONS, "visibility_timeout": 40}
    settings.DASHBOARD_DEBOUNCE_SECONDS, settings.DASHBOARD_INTERVAL_SECONDS = 5, 30
    queue.dispatch("dashboard", [7])
    assert sent == [("annotation.recompute_dashboards", [7], 5)]  # nothing ran lately: the debounce only
    assert queue.due("dashboard", [7]) == [7]
    queue.release("dashboard", [7])  # its task starts
    queue.dispatch("dashboard", [7])  # an edit meanwhile
    task, ids, countdown = sent[1]
    assert (task, ids) == ("annotation.recompute_dashboards", [7]) and 19 < countdown <= 20  # capped: half of 40 s
    assert queue.due("dashboard", [7, 8]) == [8]  # run after 20 s: 7 is put off again, 8 is due
    assert sent[2][:2] == ("annotation.recompute_dashboards", [7]) and 19 < sent[2][2] <= 20
    queue.dispatch("dashboard", [8])  # another dataset keeps its own pace
    assert sent[3] == ("annotation.recompute_dashboards", [8], 5)
    settings.DASHBOARD_INTERVAL_SECONDS = 0  # no spacing: the debounce again
    queue.release("dashboard", [7])
    queue.dispatch("dashboard", [7])
    assert sent[4] == ("annotation.recompute_dashboards", [7], 5)


def test_the_sweep_publishes_again_the_ids_of_a_message_lost_with_its_worker(sent, settings):
    """A message taken by a worker that is then SIGKILLed before its task starts never releases its
    ids. The mark outlives the broker's redelivery, then lets the sweep publish them again (with a
    fixed minute, a worker killed mid-burst left scores stale past the minute of issue 24)."""
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        "visibility_timeout": 1,
        "unacked_restore_interval": 1,
    }
    settings.SCORE_DEBOUNCE_SECONDS = 0
    queue.dispatch("annotation", [41, 42])  # sent, then lost with the worker holding it
    queue.dispatch("annotation", [41, 42])  # a save meanwhile: the message may still come back
    assert sent == [("annotation.recompute_scores", [41, 42], None)]
    time.sleep(2.2)
    queue.dispatch("annotation", [41, 42])  # the sweep, once the broker would have redelivered it
    assert sent[1:] == [("annotation.recompute_scores", [41, 42], None)]


def test_claim_is_one_pipelined_round_trip_behind_djangos_cache_proxy(sent, monkeypatch):
    """Django's ``cache`` is a proxy, which ``isinstance(cache, RedisCache)`` never matched: every
    id cost ``cache.add``'s own round trip. Now the backend behind the proxy is found."""
    from django.core.cache.backends.redis import RedisCache

    def one_by_one(*args, **kwargs):
        raise AssertionError("cache.add called: one round trip per id")

    monkeypatch.setattr(RedisCache, "add", one_by_one)
    assert queue.redis_cache() is not None
    assert queue._claim("annotation", [11, 12, 13]) == [11, 12, 13]

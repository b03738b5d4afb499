"""A world a module's fixture builds outside any test (``recomputed_as_in_a_test``, tests/conftest.py)
is recomputed as a test's own saves are: in the saving thread, its jobs run in process. Outside a test
the in-process runner is not synchronous, and an import's scheduling started the runner's thread,
which sent the jobs to the broker while the first test turned Celery's eager mode on."""

import threading

import pytest

from annotation.jobs import queue
from annotation.jobs.queue import runner
from annotation.peers.demo import load_demo
from annotation.peers.models import AnnotationScore, PeerAnnotation

from tests.conftest import recomputed_as_in_a_test


@pytest.mark.django_db
def test_a_module_world_is_recomputed_in_the_saving_thread(monkeypatch):
    load_demo()
    annotation = PeerAnnotation.objects.order_by("pk").first()
    AnnotationScore.objects.filter(annotation=annotation).delete()
    runner.stop()
    monkeypatch.setattr(runner, "synchronous", False)  # as outside any test
    threads = set(threading.enumerate())
    with recomputed_as_in_a_test():
        assert queue.in_process()
        queue.publish("annotation", [annotation.pk])
        # computed here, before the block ends: nothing left to a thread or a broker
        assert AnnotationScore.objects.filter(annotation=annotation).exists()
    assert set(threading.enumerate()) <= threads  # no runner thread started
    assert runner.synchronous is False

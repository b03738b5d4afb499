"""The live server's requests in flight (tests/conftest.py), waited for before a browser test's
database is flushed: a request the live server still answers is waited for; one the test client
answered in the main thread and never finished (a view's exception raised through the client) is
not, nor is a thread that died."""

import threading

import pytest
from django.core.signals import request_finished, request_started
from django.test import Client
from django.urls import path

from tests.conftest import _RequestsInFlight


def failing(request):
    raise RuntimeError("a view that fails")


urlpatterns = [path("fails/", failing)]


def test_a_request_answered_in_another_thread_is_waited_for():
    requests = _RequestsInFlight()
    answering, release = threading.Event(), threading.Event()

    def serve():
        requests.started()
        answering.set()
        release.wait()
        requests.finished()

    thread = threading.Thread(target=serve)
    thread.start()
    answering.wait()
    assert requests.wait_none(timeout=0.2) is False
    release.set()
    assert requests.wait_none(timeout=5) is True
    thread.join()


def test_a_thread_that_died_answering_is_not_waited_for():
    requests = _RequestsInFlight()
    thread = threading.Thread(target=requests.started)
    thread.start()
    thread.join()
    assert requests.wait_none(timeout=0.2) is True


@pytest.mark.urls(__name__)
def test_a_test_client_request_that_raised_is_not_waited_for(db):
    requests = _RequestsInFlight()
    request_started.connect(requests.started)
    request_finished.connect(requests.finished)
    try:
        with pytest.raises(RuntimeError):
            Client().get("/fails/")
        assert requests.wait_none(timeout=0.2) is True
    finally:
        request_started.disconnect(requests.started)
        request_finished.disconnect(requests.finished)

"""The broker transport's event-loop registration (``pyramid_app/broker.py``): an idle worker wakes
for kombu's timers no more often than every ``unacked_restore_interval`` and BRPOP blocks in Redis
for ``BRPOP_SECONDS``, so a worker with nothing to do costs a fraction of the CPU it did (issue 33).
Each test fails when a kombu upgrade adds a faster timer or renames what ``Transport`` replaces."""

import time

import pytest
from django.conf import settings
from kombu import Connection
from kombu.asynchronous import Hub

from pyramid_app import broker

pytestmark = pytest.mark.redis


@pytest.fixture
def registered():
    connection = Connection(
        settings.CELERY_BROKER_URL,
        transport=broker.Transport,
        transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS,
    )
    hub = Hub()
    channel = connection.default_channel
    connection.transport.register_with_event_loop(connection.connection, hub)
    yield connection, hub, channel
    hub.close()
    connection.release()


def test_no_timer_of_the_event_loop_fires_more_often_than_the_restore(registered):
    _, hub, _ = registered
    interval = settings.CELERY_BROKER_TRANSPORT_OPTIONS["unacked_restore_interval"]
    live = [event for event in hub.timer.queue if not event.entry.canceled]  # a cancelled one never fires
    first = min(event.eta for event in live) - time.monotonic()
    assert first > interval - 0.5, [event.entry.fun for event in live]


def test_brpop_blocks_for_the_configured_seconds(registered):
    _, _, channel = registered
    assert channel.brpop_timeout == broker.BRPOP_SECONDS
    assert broker.BRPOP_SECONDS < settings.CELERY_BROKER_TRANSPORT_OPTIONS["socket_timeout"]

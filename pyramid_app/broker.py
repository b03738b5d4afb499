"""Kombu's Redis transport with one fix, so a Celery worker survives losing Redis.

When the broker connection drops, Celery closes it; closing the channel hands back the messages
the worker holds unacknowledged (tasks waiting for their countdown, prefetched ones). By then kombu
has already detached the transport from the connection, so that restore fails with
``AttributeError: 'NoneType' object has no attribute 'hostname'``, which Celery does not count as a
connection error: "Unrecoverable error", the worker exits and nothing recomputes until a person
restarts it (celery and kombu 5.7.0, the latest; ``tests/faults`` reproduces it). Skipping that
restore loses nothing: with kombu's ack emulation the messages are still in Redis (the ``unacked``
hash) and any worker puts them back once the visibility timeout has passed; if Redis lost its data,
the periodic sweep (beat) publishes the stale work again.

Selected by ``CELERY_BROKER_TRANSPORT`` (settings), for the same ``redis://`` URL.
"""

import logging

from kombu.transport import redis

log = logging.getLogger(__name__)


class QoS(redis.QoS):
    def restore_unacked(self, client=None):
        transport = self.channel.connection
        if client is None and (transport is None or transport.client is None):
            log.warning(
                "broker connection already closed: %d unacknowledged message(s) stay in Redis and are "
                "restored after the visibility timeout",
                len(self._delivered),
            )
            self._delivered.clear()
            return
        super().restore_unacked(client)


class Channel(redis.Channel):
    QoS = QoS


class Transport(redis.Transport):
    Channel = Channel

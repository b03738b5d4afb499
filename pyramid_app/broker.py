"""Kombu's Redis transport with one fix, so a Celery worker survives losing Redis, and fewer
wake-ups of an idle worker.

When the broker connection drops, Celery closes it; closing the channel hands back the messages
the worker holds unacknowledged (tasks waiting for their countdown, prefetched ones). By then kombu
has already detached the transport from the connection, so that restore fails with
``AttributeError: 'NoneType' object has no attribute 'hostname'``, which Celery does not count as a
connection error: "Unrecoverable error", the worker exits and nothing recomputes until a person
restarts it (celery and kombu 5.7.0, the latest; ``tests/faults`` reproduces it). Skipping that
restore loses nothing: with kombu's ack emulation the messages are still in Redis (the ``unacked``
hash) and any worker puts them back once the visibility timeout has passed; if Redis lost its data,
the periodic sweep (beat) publishes the stale work again.

An idle worker's event loop woke about twice a second (kombu's BRPOP answered empty after its 1 s
timeout, and a 1 s timer that refreshes the bindings of expiring queues, which ours are not): at
an annotator's pace, a save every 1-3 s, those wake-ups were most of the workers' CPU per save
(issue 33, docs/results/human_pace.md). Here BRPOP waits ``BRPOP_SECONDS`` for a message (a message
still wakes the worker the moment it is pushed: this only spaces the empty answers), and the
bindings' refresh runs with the restore of unacknowledged messages (``unacked_restore_interval``,
settings), in the same wake-up.

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


# How long BRPOP blocks in Redis before answering "nothing" (kombu's default: 1 s). Below the
# connection's ``socket_timeout`` (10 s, settings), so a blocked read never outlasts the socket's;
# a half-open connection is still dropped ``health_check_interval`` (25 s) after this.
BRPOP_SECONDS = 5


class Transport(redis.Transport):
    Channel = Channel
    brpop_timeout = BRPOP_SECONDS

    def register_with_event_loop(self, connection, loop):
        """kombu's registration, with the bindings' refresh moved from a 1 s timer of its own to the
        restore's interval: our queues do not expire (``CELERY_TASK_QUEUES``), so every tick of that
        timer found nothing to do, and an expiring queue (a ``x-expires`` of more than 3 x the restore
        interval) would still be refreshed in time."""
        super().register_with_event_loop(connection, loop)
        cycle = self.cycle
        cycle._binding_expiry_tref.cancel()
        interval = connection.client.transport_options.get("unacked_restore_interval", 0)
        if interval <= 0:  # as kombu reads it
            interval = Channel.unacked_restore_interval
        cycle._binding_expiry_tref = loop.call_repeatedly(interval, cycle.maybe_refresh_binding_expiry)

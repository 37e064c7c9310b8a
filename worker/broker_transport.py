"""kombu's Redis transport, for which a full broker is a connection error, and an acknowledgement the
broker refuses still frees the consumer's slot.

At maxmemory Redis refuses writes that need memory. kombu counts that refusal (OutOfMemoryError) as a
channel error, and Celery stops the whole worker on it ("Unrecoverable error"); as a connection error
the consumer reconnects with Celery's backoff and the worker keeps running, like after a restart.

An acknowledgement (or a rejection) that fails in an outage ("Couldn't ack … OutOfMemoryError") left the
message counted as delivered in the consumer's prefetch window, which holds one message: the worker stayed
alive and never consumed again. Here the slot is freed all the same; the message stays in the broker's
unacknowledged set, which kombu gives back to the queue after the visibility timeout (a job already final
is then not run again), so nothing is lost.
"""

from __future__ import annotations

import logging

import redis
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from redis.exceptions import OutOfMemoryError

from worker.broker_health import is_transient

log = logging.getLogger(__name__)


def _broker_refused(exc: BaseException) -> bool:
    return is_transient(exc) or isinstance(exc, redis.exceptions.ExecAbortError)


class QoS(kombu_redis.QoS):
    def ack(self, delivery_tag: str) -> None:
        try:
            super().ack(delivery_tag)
        except redis.RedisError as exc:
            if not _broker_refused(exc):
                raise
            self._free_slot(delivery_tag, "acknowledge", exc)

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        try:
            super().reject(delivery_tag, requeue=requeue)
        except redis.RedisError as exc:
            if not _broker_refused(exc):
                raise
            self._free_slot(delivery_tag, "give back", exc)

    def _free_slot(self, delivery_tag: str, what: str, exc: BaseException) -> None:
        log.warning(
            "could not %s message %s (%s): the broker restores it after the visibility timeout", what, delivery_tag, exc
        )
        virtual.QoS.ack(self, delivery_tag)  # the consumer's prefetch window only


class Channel(kombu_redis.Channel):
    QoS = QoS


class Transport(kombu_redis.Transport):
    Channel = Channel
    connection_errors = (*kombu_redis.Transport.connection_errors, OutOfMemoryError)

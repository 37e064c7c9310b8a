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

A message the consumer takes off the queue while the broker is full could not be recorded as unacknowledged,
and kombu dropped it (a co-batched job whose round was killed then stayed `running` with nobody to resume
it). Here it is delivered all the same, without that record: its task waits out the outage like any other.
"""

from __future__ import annotations

import logging

import redis
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from redis.exceptions import OutOfMemoryError

from worker.translation.liveness.broker_health import is_transient

log = logging.getLogger(__name__)


def _broker_refused(exc: BaseException) -> bool:
    return is_transient(exc) or isinstance(exc, redis.exceptions.ExecAbortError)


def _full(exc: BaseException) -> bool:
    return isinstance(exc, (OutOfMemoryError, redis.exceptions.ExecAbortError)) or (
        isinstance(exc, redis.ResponseError) and "OOM" in str(exc)
    )


class QoS(kombu_redis.QoS):
    def append(self, message: virtual.Message, delivery_tag: str) -> None:
        try:
            super().append(message, delivery_tag)
        except redis.RedisError as exc:
            if not _full(exc):
                raise
            # Taken off the queue already: refusing it now would lose it. Run it unrecorded instead.
            log.warning("message %s taken while the broker is full: running it without an unacked record", delivery_tag)
            virtual.QoS.append(self, message, delivery_tag)

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


class SentinelTransport(kombu_redis.SentinelTransport):
    """The same through Redis Sentinel (TRANSQ_REDIS_SENTINELS): a failover is a reconnect too."""

    connection_errors = (*kombu_redis.SentinelTransport.connection_errors, OutOfMemoryError)

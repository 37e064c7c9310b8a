"""kombu's Redis transport as transq's Celery consumers use it (the translation worker and the document
stage: `use_transq_transport`), plain or through Sentinel, for which a full broker is a connection error, an
acknowledgement the broker refuses still frees the consumer's slot, and a failover never stops the worker.

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

A Sentinel failover while a task ran stopped the whole worker ("Unrecoverable error: AttributeError("'NoneType'
object has no attribute 'hostname'")"): closing the dead connection's channel, kombu first drops the channel's
connection pools, then gives the unacknowledged messages back to their queue through a new pool, which it builds
from the connection's settings; Celery has already let go of those (`transport.client` is None), and reading
the host of None raised. Here a channel whose connection is gone gives nothing back: the messages stay in the
broker's unacknowledged set, which any consumer restores to the queue after the visibility timeout, and the job
they carry is taken over a lease after its holder stopped renewing it (the lapsed-lease sweep).
"""

from __future__ import annotations

import logging

import redis
from celery import Celery
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from redis.exceptions import OutOfMemoryError

from shared.settings import Settings
from shared.store.replica_errors import read_no_replicas_as_connection_error

log = logging.getLogger(__name__)

_TRANSIENT_ERRORS = (
    redis.ConnectionError,
    redis.TimeoutError,
    redis.BusyLoadingError,
    redis.exceptions.OutOfMemoryError,
)


def is_transient(exc: BaseException) -> bool:
    """An outage that passes: the broker down, slow, loading, or full (a script refused at maxmemory
    fails as a plain ResponseError carrying Redis's -OOM, one refused by a primary without replicas its
    -NOREPLICAS: shared.store.replica_errors)."""
    return isinstance(exc, _TRANSIENT_ERRORS) or (
        isinstance(exc, redis.ResponseError) and any(code in str(exc) for code in ("OOM", "NOREPLICAS"))
    )


def use_transq_transport(app: Celery, settings: Settings) -> None:
    """Make a consumer's Celery app use these transports (kombu's own for a URL that is not Redis's)."""
    read_no_replicas_as_connection_error()  # a primary without replicas: reconnect, as after a restart
    if settings.redis_sentinels:
        app.conf.broker_transport = "shared.broker_transport:SentinelTransport"
    elif settings.redis_url.startswith(("redis://", "rediss://")):
        app.conf.broker_transport = "shared.broker_transport:Transport"


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

    def restore_unacked(self, client: redis.Redis | None = None) -> None:
        if client is None and not _connected(self.channel):
            log.warning(
                "the broker connection closed with %d message(s) delivered and not acknowledged: the broker "
                "restores them after the visibility timeout",
                len(self._delivered),
            )
            self._delivered.clear()
            return
        try:
            super().restore_unacked(client)
        except redis.RedisError as exc:
            if not _broker_refused(exc):
                raise
            log.warning(
                "could not give back %d unacknowledged message(s) (%s): the broker restores them after "
                "the visibility timeout",
                len(self._delivered),
                exc,
            )
            self._delivered.clear()

    def _free_slot(self, delivery_tag: str, what: str, exc: BaseException) -> None:
        log.warning(
            "could not %s message %s (%s): the broker restores it after the visibility timeout", what, delivery_tag, exc
        )
        virtual.QoS.ack(self, delivery_tag)  # the consumer's prefetch window only


def _connected(channel: kombu_redis.Channel) -> bool:
    """Whether the channel can still make a connection: Celery lets go of a dead connection's settings
    (`transport.client`) before kombu closes its channels."""
    transport = getattr(channel, "connection", None)
    return getattr(transport, "client", None) is not None


class Channel(kombu_redis.Channel):
    QoS = QoS


class SentinelChannel(kombu_redis.SentinelChannel):
    QoS = QoS


class Transport(kombu_redis.Transport):
    Channel = Channel
    connection_errors = (*kombu_redis.Transport.connection_errors, OutOfMemoryError)


class SentinelTransport(kombu_redis.SentinelTransport):
    """The same through Redis Sentinel (TRANSQ_REDIS_SENTINELS): a failover is a reconnect too."""

    Channel = SentinelChannel
    connection_errors = (*kombu_redis.SentinelTransport.connection_errors, OutOfMemoryError)

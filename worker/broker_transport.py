"""kombu's Redis transport, for which a full broker is a connection error.

At maxmemory Redis refuses writes that need memory. kombu counts that refusal (OutOfMemoryError) as a
channel error, and Celery stops the whole worker on it ("Unrecoverable error"); as a connection error
the consumer reconnects with Celery's backoff and the worker keeps running, like after a restart.
"""

from __future__ import annotations

from kombu.transport import redis as kombu_redis
from redis.exceptions import OutOfMemoryError


class Transport(kombu_redis.Transport):
    connection_errors = (*kombu_redis.Transport.connection_errors, OutOfMemoryError)


class SentinelTransport(kombu_redis.SentinelTransport):
    """The same through Redis Sentinel (TRANSQ_REDIS_SENTINELS): a failover is a reconnect too."""

    connection_errors = (*kombu_redis.SentinelTransport.connection_errors, OutOfMemoryError)

"""A primary without a replica that keeps up refuses writes (`min-replicas-to-write`, which every shipped
Sentinel configuration sets: docs/deployment.md, Several hosts) with -NOREPLICAS, so that a primary cut off
from its replicas takes no write that the failover would discard. redis-py reads that refusal as a plain
ResponseError, which kombu counts as a channel error (Celery then stops the worker) and the worker's store
calls as a failure of their own. It passes like an outage (the replica catches up, or a failover names a
new primary), so here it is a connection error: clients reconnect (through the sentinels, to the primary
they name now) and retry, as after a restart."""

from __future__ import annotations

import redis
from redis._parsers.base import BaseParser


class NoReplicasError(redis.ConnectionError):
    """-NOREPLICAS: the primary has no replica that acknowledged replication recently enough."""


def read_no_replicas_as_connection_error() -> None:
    """Make redis-py raise NoReplicasError for -NOREPLICAS in this process (idempotent)."""
    BaseParser.EXCEPTION_CLASSES.setdefault("NOREPLICAS", NoReplicasError)

"""Asynchronous replication, waited for where it matters: a job answered 202 must survive a failover.

Redis replicates asynchronously, so a primary that dies right after a write may take it with it. `WAIT`
blocks until replicas acknowledged the connection's own last write; writing a probe first on the same
connection makes that cover every write acknowledged before it (the job record, its queue message sent
by Celery on another connection), since the replication stream is one ordered log.
"""

from __future__ import annotations

import redis

from shared.store.keys import Keys


def wait_for_replica(client: redis.Redis, keys: Keys, timeout_ms: int, replicas: int = 1) -> int:
    """How many replicas acknowledged everything written so far (at most `timeout_ms` of waiting)."""
    pipe = client.pipeline(transaction=False)
    pipe.set(keys.replication_probe, "1", px=60_000)
    pipe.wait(replicas, timeout_ms)
    return int(pipe.execute()[-1])


def rediscover_primary(client: redis.Redis) -> None:
    """Drop the client's idle pooled connections, so that its next command asks the sentinels for the primary
    (a sentinel-managed connection asks only when it connects; one in use is dropped when it is given back,
    once the pool has learnt of another primary). Without sentinels the server is the same: reconnecting
    costs little."""
    client.connection_pool.disconnect(inuse_connections=False)

"""shared.broker_transport with Sentinel: closing the channel of a connection Celery has let go of (after a
failover) neither raises nor loses the message delivered and unacknowledged; -NOREPLICAS is a connection error.

Real Redis servers and sentinels (devstack.sentinel.SentinelCluster) and kombu's own Connection. Celery closes a
dead connection's channels after kombu's Connection dropped its settings (`transport.client = None`); kombu's
Sentinel channel then rebuilt a pool from them to give the message back, and raised AttributeError("'NoneType'
object has no attribute 'hostname'"), which stopped the worker (issue 38 item 1)."""

from __future__ import annotations

from typing import Iterator

import pytest
import redis
from kombu import Connection, Producer, Queue

from devstack.sentinel import SentinelCluster
from shared.broker_transport import SentinelTransport, is_transient
from shared.store.replica_errors import NoReplicasError, read_no_replicas_as_connection_error


@pytest.fixture(scope="module")
def cluster() -> Iterator[SentinelCluster]:
    made = SentinelCluster().start()
    try:
        yield made
    finally:
        made.stop()


def _delivered_unacknowledged(cluster: SentinelCluster, transport: str) -> tuple[Connection, object]:
    url = ";".join(f"sentinel://{s.address}/0" for s in cluster.sentinels)
    connection = Connection(url, transport=transport, transport_options={"master_name": "transq"})
    channel = connection.channel()
    queue = Queue("transport-test", channel=channel)
    queue.declare()
    Producer(channel).publish({"job": 1}, routing_key="transport-test")
    assert queue.get(no_ack=False) is not None
    return connection, channel


def _master(cluster: SentinelCluster) -> redis.Redis:
    return redis.Redis("127.0.0.1", cluster.primary_port(), decode_responses=True)


def test_a_channel_closed_after_its_connection_was_let_go_keeps_the_message_for_the_broker(cluster):
    connection, channel = _delivered_unacknowledged(cluster, "shared.broker_transport:SentinelTransport")
    assert isinstance(connection.transport, SentinelTransport)
    channel._disconnect_pools()  # the connection died
    connection.transport.client = None  # Celery's teardown (kombu Connection._do_close_transport)
    channel.close()  # kombu's own Sentinel channel raised AttributeError here
    assert _master(cluster).hlen("unacked") == 1  # restored to the queue after the visibility timeout


def test_kombu_s_own_sentinel_channel_still_raises_there(cluster):
    """Why the channel is transq's: if kombu stops raising, shared.broker_transport's override can go."""
    connection, channel = _delivered_unacknowledged(cluster, "kombu.transport.redis:SentinelTransport")
    channel._disconnect_pools()
    connection.transport.client = None
    with pytest.raises(AttributeError, match="hostname"):
        channel.close()


def test_a_primary_without_replicas_is_a_connection_error(cluster):
    read_no_replicas_as_connection_error()
    client = _master(cluster)
    client.config_set("min-replicas-to-write", "3")  # more than it has: it refuses writes now
    try:
        with pytest.raises(NoReplicasError) as refused:
            client.set("transport-test-key", "1")
        assert isinstance(refused.value, redis.ConnectionError) and is_transient(refused.value)
        with pytest.raises(redis.RedisError) as in_script:  # a script's write is refused alike
            client.eval("return redis.call('SET', KEYS[1], '1')", 1, "transport-test-key")
        assert is_transient(in_script.value)
    finally:
        client.config_set("min-replicas-to-write", "1")

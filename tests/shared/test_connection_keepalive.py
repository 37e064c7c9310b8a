"""Every connection to the broker and the cache, Celery's included, has TCP keepalive probing after a couple of
idle seconds and a TCP user timeout, read back from the real sockets (a consumer blocked in BRPOP on a
connection whose peer lost its state used to wait for kombu's own 30 s check, issue 38)."""

from __future__ import annotations

import dataclasses
import socket

import pytest
import redis

from shared.celery_factory import make_celery
from shared.settings import Settings
from shared.store.redis_client import broker_redis, cache_redis

pytestmark = pytest.mark.skipif(not hasattr(socket, "TCP_USER_TIMEOUT"), reason="TCP_USER_TIMEOUT is Linux's")


def _options(sock: socket.socket) -> tuple[int, int, int, int, int]:
    return (
        sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
        sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
        sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
        sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
        sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT),
    )


def _socket_of(client: redis.Redis) -> socket.socket:
    connection = client.connection_pool.get_connection()
    connection.connect()
    return connection._sock


def test_job_store_and_cache_connections_probe_after_two_idle_seconds_and_time_out_in_five(redis_server):
    settings = Settings(redis_url=redis_server.url, cache_url=redis_server.url)
    assert _options(_socket_of(broker_redis(settings))) == (1, 2, 1, 3, 5000)  # TRANSQ_REDIS_SOCKET_TIMEOUT 2 s
    assert _options(_socket_of(cache_redis(settings))) == (1, 1, 1, 3, 4000)  # the cache's 0.25 s: at least 1 s
    slower = dataclasses.replace(settings, redis_socket_timeout=10.0)
    assert _options(_socket_of(broker_redis(slower))) == (1, 10, 1, 3, 13_000)


def test_celery_connections_the_consumer_s_brpop_included_have_them_and_kombu_checks_brpop_in_seconds(redis_server):
    app = make_celery(Settings(redis_url=redis_server.url))
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        assert _options(_socket_of(channel.client)) == (1, 2, 1, 3, 5000)  # publishing
        assert _options(_socket_of(channel.subclient)) == (1, 2, 1, 3, 5000)  # the consumer's BRPOP, pub/sub
        assert channel.health_check_interval == 2  # a BRPOP reply overdue by 1 + 2 s: dropped (was 25)

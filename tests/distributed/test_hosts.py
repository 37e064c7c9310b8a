"""The multi-host harness itself: hosts reach each other by address, a cut host is unreachable until
healed, a killed host's processes are gone, and nothing is left behind."""

from __future__ import annotations

import subprocess
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from devstack.hosts import PREFIX, Network
from devstack.redis_server import RedisServer

pytestmark = pytest.mark.slow


def _namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in listed.splitlines() if line.startswith(PREFIX)}


def test_hosts_reach_each_other_cut_heal_kill_and_leave_nothing(network):
    server_host, client_host = network.add_hosts("server", "client")
    assert server_host.address != client_host.address
    assert server_host.address.rsplit(".", 1)[0] == network.subnet
    with network.inside(client_host):
        server = RedisServer(password="pw", host=server_host.address, launcher=server_host.launcher).start()
        client = redis.Redis(
            host=server_host.address, port=server.port, password="pw", socket_timeout=1, retry=Retry(NoBackoff(), 0)
        )
        assert client.ping()
        network.cut(server_host)
        started = time.monotonic()
        with pytest.raises(redis.TimeoutError):  # packets are lost, not refused: the call times out
            client.ping()
        assert time.monotonic() - started >= 0.9
        network.heal(server_host)
        assert redis.Redis(host=server_host.address, port=server.port, password="pw", socket_timeout=2).ping()
        assert server.process.pid in network.pids(server_host)
        network.kill_processes(server_host)
        assert server.process.wait(timeout=5) != 0
        server.stop()
    # The test's own thread is back home: its loopback is the machine's, not the client host's.
    assert server_host.namespace in _namespaces()


def test_separated_hosts_lose_each_other_and_still_reach_the_rest(network):
    a, b, c = network.add_hosts("a", "b", "c")
    with network.inside(c):
        server = RedisServer(password="pw", host=a.address, launcher=a.launcher).start()
        try:
            network.separate(a, [b])

            def ping_from(host):  # a fresh connection made on `host`
                with network.inside(host):
                    client = redis.Redis(
                        host=a.address, port=server.port, password="pw", socket_timeout=1, retry=Retry(NoBackoff(), 0)
                    )
                    return client.ping()

            assert ping_from(c)
            with pytest.raises((redis.TimeoutError, redis.ConnectionError)):
                ping_from(b)
            network.rejoin(a, [b])
            assert ping_from(b)
        finally:
            server.stop()


def test_network_close_deletes_its_namespaces_and_leftovers_of_dead_runs():
    reason = Network.unavailable()
    if reason:
        pytest.skip(f"multi-host tests need network namespaces: {reason}")
    leftover = f"{PREFIX}999999999-dead-x"  # as if left by a run whose process (pid 999999999) is gone
    subprocess.run(["ip", "netns", "add", leftover], check=True)
    with Network() as net:
        net.add_hosts("a", "b")
        mine = {net.switch, *(h.namespace for h in net.hosts.values())}
        assert mine <= _namespaces()
        assert leftover not in _namespaces()
    assert not mine & _namespaces()

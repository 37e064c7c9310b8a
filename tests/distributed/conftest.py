"""Fixtures for tests across network hosts (devstack.hosts): every part on a host of its own.

    def test_something(host_stack):
        s = host_stack(password="pw", workers=2)     # broker, cache, api, w1, w2 hosts; this test on "client"
                                                      # (username="u": the broker has an ACL user u instead)
        job = s.client.submit(["你好。"])
        s.network.cut(s.hosts["w1"])                  # and s.network.heal(...), s.network.kill_processes(...)

The test's own thread runs on the "client" host for the whole test, so its Redis and HTTP clients reach
the others by their addresses; everything is stopped and the namespaces deleted afterwards, even on failure.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import Iterator

import pytest

from devstack.certificates import make_tls_files
from devstack.hosts import Host, Network
from devstack.redis_server import RedisServer
from shared.store.redis_client import broker_redis
from tests.conftest import Stack
from tests.stack import ApiProcess, WorkerProcess, stack_settings
from transq_cli.client import TransqClient


@pytest.fixture
def network() -> Iterator[Network]:
    """A private network of hosts; skipped, saying why, where namespaces cannot be made."""
    reason = Network.unavailable()
    if reason:
        pytest.skip(f"multi-host tests need network namespaces: {reason}")
    with Network() as net:
        yield net


class HostStack(Stack):
    """tests.conftest.Stack spread over hosts: broker and cache Redis, the API and each worker on its own."""

    def __init__(
        self,
        network: Network,
        tmp: Path,
        model_dir: Path,
        password: str | None = None,
        username: str | None = None,
        tls: bool = False,
        **overrides: object,
    ):
        self.network = network
        self.tmp = tmp
        self.workers: list[WorkerProcess] = []
        self.api: ApiProcess | None = None
        self.documents = None  # no document stage: these tests translate texts
        self.hosts: dict[str, Host] = {h.name: h for h in network.add_hosts("broker", "cache", "api")}
        # TLS: the servers' certificate names both Redis hosts' addresses; clients trust the test's CA only.
        self.tls = make_tls_files(tmp / "tls", [self.hosts[h].address for h in ("broker", "cache")]) if tls else None
        tls_files = self.tls
        self.redis = RedisServer(password=password, username=username, tls=tls_files, **self._on("broker"))
        self.cache = RedisServer(password=password, tls=tls_files, policy="allkeys-lru", **self._on("cache"))
        self.settings = stack_settings(self.redis.url, model_dir, cache_url=self.cache.url, **overrides)
        self.want_worker = False

    def _on(self, host: str) -> dict:
        """Where a server runs: the host's address, started through its launcher."""
        return {"host": self.hosts[host].address, "launcher": self.hosts[host].launcher}

    def start(self, workers: int = 2) -> HostStack:
        self.redis.start()
        self.cache.start()
        return self.start_services(workers)

    def start_services(self, workers: int) -> HostStack:
        """The API and `workers` workers, once Redis is up."""
        self.api = ApiProcess(self.settings, self.tmp / "api.log", port=8080, **self._on("api")).start()
        self.client = TransqClient(self.api.url)
        self.r = broker_redis(self.settings)
        for _ in range(workers):
            self.add_worker(wait_ready=False)
        for worker in self.workers:
            worker.wait_ready(timeout=180)
        return self

    def add_worker(self, name: str | None = None, wait_ready: bool = True, **overrides: object) -> WorkerProcess:
        """A worker on a new host of its own (named like the worker: w1, w2, ...)."""
        name = name or f"w{len(self.workers) + 1}"
        host = self.hosts[name] = self.network.add_host(name)
        settings = dataclasses.replace(self.settings, **overrides)
        worker = WorkerProcess(settings, self.tmp / f"{name}.log", name=name, launcher=host.launcher)
        self.workers.append(worker)
        return worker.start(wait_ready=wait_ready, timeout=180)

    def close(self) -> None:
        super().close()
        self.cache.stop()


@pytest.fixture
def host_stack(network: Network, tmp_path: Path, model_dir: Path) -> Iterator:
    """Make a HostStack (start(workers=...) is called for you); the test runs on the "client" host."""
    made: list[HostStack] = []
    with contextlib.ExitStack() as cleanup:
        cleanup.enter_context(network.inside(network.add_host("client")))

        def make(workers: int = 2, **options: object) -> HostStack:
            s = HostStack(network, tmp_path, model_dir, **options)
            made.append(s)
            cleanup.callback(s.close)
            return s.start(workers=workers)

        yield make

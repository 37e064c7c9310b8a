"""The broker fails over: a primary, two replicas and three sentinels, each on its own host; the primary's
host dies or is cut off while 100 jobs are submitted and translated. A replica is promoted, the API and the workers
reconnect by themselves, and every job that got 202 is translated."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
import redis

from devstack.hosts import Network
from devstack.redis_server import RedisServer
from devstack.sentinel import PRIMARY_ARGS, SentinelServer
from tests.distributed.conftest import HostStack
from tests.stack import ApiProcess, stack_settings
from transq_cli.client import TransqClient, TransqError

pytestmark = pytest.mark.slow
log = logging.getLogger(__name__)

PASSWORD = "pw-Failover-3"
JOBS = 100
KILL_AFTER = 30


class SentinelStack(HostStack):
    """Broker and cache on one Redis master found through sentinels (no TRANSQ_CACHE_URL): r1 the first
    primary, r2 and r3 its replicas, s1-s3 the sentinels; the API and each worker on hosts of their own.
    Two replicas, so that after a failover one is left to acknowledge `WAIT 1`."""

    def __init__(self, network: Network, tmp: Path, model_dir: Path, **overrides: object):
        self.network, self.tmp = network, tmp
        self.workers = []
        self.api: ApiProcess | None = None
        names = ("api", "r1", "r2", "r3", "s1", "s2", "s3")
        self.hosts = {h.name: h for h in network.add_hosts(*names)}
        primary = self.hosts["r1"].address
        self.servers = {
            name: RedisServer(
                port=6379,
                password=PASSWORD,
                extra_args=[*PRIMARY_ARGS, *([] if name == "r1" else ["--replicaof", primary, "6379"])],
                **self._on(name),
            )
            for name in ("r1", "r2", "r3")
        }
        self.redis = self.servers["r1"]
        self.sentinels = [
            SentinelServer((primary, 6379), port=26379, password=PASSWORD, **self._on(name))
            for name in ("s1", "s2", "s3")
        ]
        self.settings = stack_settings(
            f"redis://:{PASSWORD}@{primary}:6379/0",  # only the password and db count with sentinels
            model_dir,
            cache_url="",
            redis_sentinels=",".join(s.address for s in self.sentinels),
            redis_master="transq",
            replica_wait_ms=1000,
            **overrides,
        )

    def start(self, workers: int = 2) -> SentinelStack:
        for server in self.servers.values():
            server.start()
        for name in ("r2", "r3"):
            _wait_for(lambda n=name: self._replica_linked(n), 20, f"{name} replicating r1")
        for sentinel in self.sentinels:
            sentinel.start()
        for sentinel in self.sentinels:  # each must know the others (quorum 2) and both replicas
            _wait_for(lambda s=sentinel: s.settled(replicas=2), 30, f"sentinel {sentinel.address} ready")
        return self.start_services(workers)

    def _replica_linked(self, name: str) -> bool:
        client = _client(self.servers[name])
        return client.info("replication").get("master_link_status") == "up"

    def master_host(self) -> str:
        address = self.sentinels[1].master_address()
        return next(name for name, h in self.hosts.items() if address and h.address == address[0])

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        if self.api is not None:
            self.api.stop()
        for server in [*self.sentinels, *self.servers.values()]:
            server.stop()


def _client(server: RedisServer) -> redis.Redis:
    return redis.Redis(host=server.host, port=server.port, password=server.password, socket_timeout=2)


def _wait_for(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.1)
    raise TimeoutError(f"not ready in {timeout}s: {what}")


def _submit_until_accepted(client: TransqClient, i: int, deadline: float) -> dict:
    """Submit job i until it gets 202 (the same Idempotency-Key each time, so a retry is one job)."""
    while True:
        try:
            return client.submit([f"第{i}号任务的第一句。", f"第{i}号任务的第二句。"], idempotency_key=f"job-{i}")
        except TransqError as exc:
            if time.monotonic() > deadline or exc.status not in (0, 503):
                raise
            time.sleep(0.1)


@pytest.mark.parametrize("fault", ["kill", "cut"])
def test_primary_dies_while_100_jobs_are_submitted_and_none_accepted_is_lost(fault, network, tmp_path, model_dir):
    """`kill`: everything on the primary's host is SIGKILLed (connections to it are reset); `cut`: its
    link goes down (connections to it hang until their timeouts), and is healed once all jobs are in."""
    with network.inside(network.add_host("client")):
        s = SentinelStack(network, tmp_path, model_dir)
        try:
            s.start(workers=2)
            assert s.master_host() == "r1"
            accepted, killed_at, first_after = [], 0.0, 0.0
            for i in range(JOBS):
                if i == KILL_AFTER:
                    if fault == "kill":
                        network.kill_processes(s.hosts["r1"])  # the primary's host dies
                    else:
                        network.cut(s.hosts["r1"])  # or is cut off
                    killed_at = time.monotonic()
                job = _submit_until_accepted(s.client, i, time.monotonic() + 60)
                accepted.append(job["id"])
                if killed_at and not first_after:
                    first_after = time.monotonic()
            log.warning("failover (%s): first submission accepted %.1f s later", fault, first_after - killed_at)
            assert s.master_host() in ("r2", "r3")
            if fault == "cut":
                network.heal(s.hosts["r1"])  # the old primary is back, and must not take anything over
            deadline = time.monotonic() + 120
            final = [
                s.wait_status(j, ("succeeded", "failed"), timeout=max(1, deadline - time.monotonic())) for j in accepted
            ]
            assert [j["status"] for j in final] == ["succeeded"] * JOBS
            # Nobody restarted the API or the workers: they found the new primary themselves.
            assert s.api.process.poll() is None
            assert all(w.process.poll() is None for w in s.workers)
            for log_file in tmp_path.glob("*.log"):
                assert PASSWORD not in log_file.read_text(errors="replace"), log_file.name
        finally:
            s.close()

"""Redis Sentinel for failover tests and benchmarks: a Sentinel process (redis-server --sentinel) watching one
master, and a cluster of a primary, two replicas and three sentinels on loopback.

The timings are the production-safe ones docs/deployment.md ships (Several hosts): a master is down only after
DOWN_AFTER_MS without answers, well above the pauses of a loaded host (with 1 s, a loaded 2-core host had the
replica just promoted marked down 1.1 s later and a second one promoted, and the first stayed a primary for 11 s
and later discarded what it took meanwhile), and every server, whichever is primary, refuses writes unless a
replica acknowledged it within MAX_LAG_SECONDS (PRIMARY_ARGS): a primary cut off from its replicas stops taking
writes it would lose. A test that must fail over quickly passes shorter timings and says why.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import redis

from devstack.redis_server import RedisServer, free_port, redis_server_binary, stop_process

DOWN_AFTER_MS = 5000
FAILOVER_TIMEOUT_MS = 30000
MAX_LAG_SECONDS = 10
# On every server of a Sentinel group (a replica becomes the primary): no write without a replica that
# acknowledged replication within MAX_LAG_SECONDS.
PRIMARY_ARGS = ["--min-replicas-to-write", "1", "--min-replicas-max-lag", str(MAX_LAG_SECONDS)]


class SentinelServer:
    """Watches `master_name` at `master` (address, port); quorum 2 of 3, a master is down after
    `down_after_ms` without answers. stop() ends it by its pid and removes its folder."""

    def __init__(
        self,
        master: tuple[str, int],
        master_name: str = "transq",
        host: str = "127.0.0.1",
        port: int | None = None,
        launcher: list[str] | None = None,
        password: str | None = None,
        quorum: int = 2,
        down_after_ms: int = DOWN_AFTER_MS,
        failover_timeout_ms: int = FAILOVER_TIMEOUT_MS,
    ):
        self.master, self.master_name, self.host = master, master_name, host
        self.port = port or free_port()
        self.launcher = launcher or []
        self.password, self.quorum = password, quorum
        self.down_after_ms, self.failover_timeout_ms = down_after_ms, failover_timeout_ms
        self.directory = tempfile.mkdtemp(prefix="transq-sentinel-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def _config(self) -> str:
        name = self.master_name
        lines = [
            f"port {self.port}",
            f"bind {self.host}",
            f"dir {self.directory}",
            "daemonize no",
            "loglevel notice",
            f"logfile {self.directory}/sentinel.log",
            f"sentinel monitor {name} {self.master[0]} {self.master[1]} {self.quorum}",
            f"sentinel down-after-milliseconds {name} {self.down_after_ms}",
            f"sentinel failover-timeout {name} {self.failover_timeout_ms}",
            f"sentinel parallel-syncs {name} 1",
        ]
        if self.password:
            lines.append(f"sentinel auth-pass {name} {self.password}")
        return "\n".join(lines) + "\n"

    def start(self) -> SentinelServer:
        config = Path(self.directory) / "sentinel.conf"
        config.write_text(self._config())
        self.process = subprocess.Popen(
            [*self.launcher, redis_server_binary(), str(config), "--sentinel"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        client = self.client()
        deadline = time.monotonic() + 10
        while True:
            try:
                if client.sentinel_get_master_addr_by_name(self.master_name):
                    return self
            except redis.RedisError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"sentinel did not start on {self.address}: {self.log_tail()}")
            time.sleep(0.05)

    def client(self) -> redis.Redis:
        return redis.Redis(self.host, self.port, socket_timeout=1, decode_responses=True)

    def settled(self, replicas: int, others: int = 2) -> bool:
        """Whether it knows `replicas` replicas and `others` other sentinels (a failover needs the quorum)."""
        try:
            client = self.client()
            found = client.sentinel_sentinels(self.master_name), client.sentinel_slaves(self.master_name)
        except redis.RedisError:
            return False
        return len(found[0]) >= others and len(found[1]) >= replicas

    def master_address(self) -> tuple[str, int] | None:
        found = self.client().sentinel_get_master_addr_by_name(self.master_name)
        return (found[0], int(found[1])) if found else None

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return (Path(self.directory) / "sentinel.log").read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        stop_process(self.process, timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)


class SentinelCluster:
    """A primary and two replicas (each with PRIMARY_ARGS) on loopback, watched by three sentinels on master name
    `transq`; `down_after_ms` and `failover_timeout_ms` as SentinelServer's."""

    def __init__(
        self,
        password: str | None = None,
        down_after_ms: int = DOWN_AFTER_MS,
        failover_timeout_ms: int = FAILOVER_TIMEOUT_MS,
    ):
        self.password = password
        self.ports = [free_port() for _ in range(3)]
        self.servers = {p: self._server(p, None if i == 0 else self.ports[0]) for i, p in enumerate(self.ports)}
        self.sentinels = [
            SentinelServer(
                ("127.0.0.1", self.ports[0]),
                password=password,
                down_after_ms=down_after_ms,
                failover_timeout_ms=failover_timeout_ms,
            )
            for _ in range(3)
        ]

    def _server(self, port: int, primary: int | None) -> RedisServer:
        replica_of = ["--replicaof", "127.0.0.1", str(primary)] if primary else []
        return RedisServer(port=port, password=self.password, extra_args=[*PRIMARY_ARGS, *replica_of])

    @property
    def addresses(self) -> str:
        """TRANSQ_REDIS_SENTINELS for this cluster."""
        return ",".join(s.address for s in self.sentinels)

    def start(self) -> SentinelCluster:
        for server in self.servers.values():
            server.start()
        for sentinel in self.sentinels:
            sentinel.start()
        self.wait_settled()
        return self

    def wait_settled(self, timeout: float = 60) -> None:
        """Until every sentinel knows two replicas and the two other sentinels."""
        deadline = time.monotonic() + timeout
        while not (all(s.settled(replicas=2) for s in self.sentinels) and self._writable()):
            if time.monotonic() > deadline:
                raise TimeoutError("the Sentinel cluster did not settle")
            time.sleep(0.1)

    def _writable(self) -> bool:
        """Whether the primary takes writes: enough of its replicas acknowledge (min-replicas-to-write)."""
        try:
            server = self.servers[self.primary_port()]
            client = redis.Redis(server.host, server.port, password=self.password, socket_timeout=1)
            found = client.info("replication")
        except (redis.RedisError, AssertionError, KeyError):
            return False
        return found.get("role") == "master" and int(found.get("min_slaves_good_slaves", 1)) >= 1

    def primary_port(self) -> int:
        address = self.sentinels[0].master_address()
        assert address
        return address[1]

    def kill_primary(self) -> int:
        """SIGKILL the primary; its port."""
        port = self.primary_port()
        self.servers[port].kill()
        return port

    def wait_failover(self, old_port: int, timeout: float = 60) -> int:
        """Until every sentinel names a new primary that answers as one; its port."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                ports = {s.master_address()[1] for s in self.sentinels}  # type: ignore[index]
                if len(ports) == 1 and old_port not in ports:
                    port = ports.pop()
                    server = self.servers[port]
                    client = redis.Redis(server.host, server.port, password=self.password, socket_timeout=1)
                    if client.info("replication")["role"] == "master":
                        return port
            except (redis.RedisError, TypeError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"no failover from port {old_port}: {self.sentinels[0].log_tail()}")
            time.sleep(0.1)

    def rejoin(self, port: int) -> None:
        """Restart a killed server as a replica of the current primary, as a restarted node would be."""
        self.servers[port].stop()
        self.servers[port] = self._server(port, self.primary_port()).start()
        self.wait_settled()

    def stop(self) -> None:
        for process in [*self.sentinels, *self.servers.values()]:
            process.stop()

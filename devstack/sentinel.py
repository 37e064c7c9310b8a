"""A Redis Sentinel process (redis-server --sentinel) watching one master, for failover tests."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import redis

from devstack.redis_server import free_port, redis_server_binary, stop_process


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
        down_after_ms: int = 1000,
        failover_timeout_ms: int = 6000,
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

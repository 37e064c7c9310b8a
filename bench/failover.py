"""Redis Sentinel: what `WAIT 1` costs a submission, and how long the broker is away in a failover.

    python -m bench.failover [--jobs 600] [--failovers 3]

One primary, two replicas and three sentinels (down after 1 s) on loopback, and two APIs (gunicorn, one
process each) on them through TRANSQ_REDIS_SENTINELS: one with TRANSQ_REPLICA_WAIT_MS=1000 (202 only once
a replica has the job), one with 0 (the baseline), measured in alternating blocks of the same run. No
workers: jobs only queue (one sentence each, none cached). Then, `--failovers` times, the primary is
SIGKILLed while one client submits back to back: the time from the kill to the first 202, with the
killed server restarted as a replica after each round (so `WAIT 1` has a replica again), and the next
kill only after twice the sentinels' failover timeout (Sentinel waits that long before it fails the same
master name over again).
"""

from __future__ import annotations

import logging
import statistics
import tempfile
import time
from pathlib import Path

import requests

from bench.common import arguments, machine, parse, percentile, table
from devstack.processes import ApiProcess
from devstack.redis_server import RedisServer, free_port
from devstack.sentinel import SentinelServer
from shared.settings import Settings

log = logging.getLogger("bench")


class Cluster:
    """A primary and two replicas on loopback, watched by three sentinels."""

    def __init__(self) -> None:
        self.ports = [free_port() for _ in range(3)]
        self.servers = {p: self._server(p, None if i == 0 else self.ports[0]) for i, p in enumerate(self.ports)}
        self.sentinels = [SentinelServer(("127.0.0.1", self.ports[0])) for _ in range(3)]

    @staticmethod
    def _server(port: int, primary: int | None) -> RedisServer:
        return RedisServer(port=port, extra_args=["--replicaof", "127.0.0.1", str(primary)] if primary else [])

    def start(self) -> Cluster:
        for server in self.servers.values():
            server.start()
        for sentinel in self.sentinels:
            sentinel.start()
        _wait(lambda: all(s.settled(replicas=2) for s in self.sentinels), 30)
        return self

    def primary_port(self) -> int:
        address = self.sentinels[0].master_address()
        assert address
        return address[1]

    def kill_primary(self) -> int:
        port = self.primary_port()
        self.servers[port].kill()
        return port

    def rejoin(self, port: int) -> None:
        """Restart a killed server as a replica of the current primary, as a restarted node would be."""
        self.servers[port].stop()
        self.servers[port] = self._server(port, self.primary_port()).start()
        _wait(lambda: all(s.settled(replicas=2) for s in self.sentinels), 60)

    def stop(self) -> None:
        for process in [*self.sentinels, *self.servers.values()]:
            process.stop()


def _wait(check, timeout: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not _safe(check):
        if time.monotonic() > deadline:
            raise TimeoutError("the Sentinel cluster did not settle")
        time.sleep(0.1)


def _safe(check) -> bool:  # type: ignore[no-untyped-def]
    try:
        return bool(check())
    except Exception:  # noqa: BLE001 - not up yet
        return False


def submit_ms(session: requests.Session, url: str, text: str) -> float:
    started = time.perf_counter()
    response = session.post(f"{url}/v1/jobs", json={"text": text}, timeout=30)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 202:
        raise RuntimeError(f"submission answered {response.status_code}: {response.text[:200]}")
    return elapsed


def failover_seconds(cluster: Cluster, url: str, tag: str) -> tuple[float, int]:
    """Kill the primary while submitting; seconds to the first 202 after the kill, and the 503s meanwhile."""
    session = requests.Session()
    for i in range(20):  # traffic before the kill
        submit_ms(session, url, f"故障前{tag}第{i}句。")
    killed = cluster.kill_primary()
    started, refused = time.perf_counter(), 0
    while True:
        try:
            response = session.post(f"{url}/v1/jobs", json={"text": f"故障后{tag}第{refused}句。"}, timeout=30)
            if response.status_code == 202:
                break
            refused += 1
        except requests.RequestException:
            refused += 1
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    cluster.rejoin(killed)
    # A sentinel does not start another failover of the same master name within twice its failover
    # timeout: wait that out, so each round measures a failover as a rare event, not a back-to-back one.
    time.sleep(max(0.0, 2 * cluster.sentinels[0].failover_timeout_ms / 1000 + 1 - (time.perf_counter() - started)))
    return seconds, refused


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--jobs", type=int, default=600, help="submissions per API, in 6 alternating blocks")
    parser.add_argument("--failovers", type=int, default=3)
    args = parse(parser)
    cluster = Cluster().start()
    apis: dict[str, ApiProcess] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for label, wait_ms in (("without WAIT (TRANSQ_REPLICA_WAIT_MS=0)", 0), ("with WAIT 1 (1000 ms)", 1000)):
                settings = Settings(
                    redis_url="redis://127.0.0.1:6379/0",
                    redis_sentinels=",".join(s.address for s in cluster.sentinels),
                    replica_wait_ms=wait_ms,
                    model="bench/no-worker-model",
                    rate_limit="",
                    max_queue=1_000_000,
                    log_level="WARNING",
                )
                apis[label] = ApiProcess(settings, Path(tmp) / f"api{wait_ms}.log").start(workers=1)
            latencies: dict[str, list[float]] = {label: [] for label in apis}
            sessions = {label: requests.Session() for label in apis}
            for label, api in apis.items():  # warm-up: connections, scripts
                for i in range(20):
                    submit_ms(sessions[label], api.url, f"预热{label}{i}。")
            block = max(1, args.jobs // 6)
            for b in range(6):
                for label, api in apis.items():
                    for i in range(block):
                        latencies[label].append(submit_ms(sessions[label], api.url, f"块{b}{label}第{i}句。"))
            failovers = [
                failover_seconds(cluster, apis["with WAIT 1 (1000 ms)"].url, str(n)) for n in range(args.failovers)
            ]
    finally:
        for api in apis.values():
            api.stop()
        cluster.stop()
    base = statistics.median(latencies["without WAIT (TRANSQ_REPLICA_WAIT_MS=0)"])
    rows = [
        [label, len(values), statistics.median(values), percentile(values, 95), statistics.median(values) - base]
        for label, values in latencies.items()
    ]
    print(f"\nPOST /v1/jobs through Sentinel, one client, loopback; {machine()}\n")
    print(table(["API", "submissions", "median ms", "p95 ms", "median - baseline ms"], rows))
    print("\nFailover: primary SIGKILLed while submitting (sentinels: down after 1 s, quorum 2 of 3)\n")
    rows = [[n + 1, seconds, refused] for n, (seconds, refused) in enumerate(failovers)]
    print(table(["failover", "kill to first 202 s", "submissions refused meanwhile"], rows))
    print(f"\nfailover_median_s={statistics.median(s for s, _ in failovers):.1f}")


if __name__ == "__main__":
    main()

"""Redis Sentinel: what `WAIT 1` costs a submission, and how long the broker is away in a failover.

    python -m bench.failover [--jobs 600] [--failovers 3]

One primary, two replicas and three sentinels (devstack.sentinel.SentinelCluster: the shipped timings, down
after 5 s; every server with min-replicas-to-write 1) on loopback, and two APIs (gunicorn, one
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
from devstack.sentinel import DOWN_AFTER_MS, SentinelCluster
from shared.settings import Settings

log = logging.getLogger("bench")


def submit_ms(session: requests.Session, url: str, text: str) -> float:
    started = time.perf_counter()
    response = session.post(f"{url}/v1/jobs", json={"text": text}, timeout=30)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 202:
        raise RuntimeError(f"submission answered {response.status_code}: {response.text[:200]}")
    return elapsed


def failover_seconds(cluster: SentinelCluster, url: str, tag: str) -> tuple[float, int]:
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
    # The shipped sentinel timings (devstack.sentinel: down after 5 s); a failover timeout of 6 s only shortens
    # the wait between rounds (Sentinel fails the same master name over again after twice it).
    cluster = SentinelCluster(failover_timeout_ms=6000).start()
    apis: dict[str, ApiProcess] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for label, wait_ms in (("without WAIT (TRANSQ_REPLICA_WAIT_MS=0)", 0), ("with WAIT 1 (1000 ms)", 1000)):
                settings = Settings(
                    redis_url="redis://127.0.0.1:6379/0",
                    redis_sentinels=cluster.addresses,
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
    print(f"\nFailover: primary SIGKILLed while submitting (sentinels: down after {DOWN_AFTER_MS} ms, quorum 2 of 3)\n")
    rows = [[n + 1, seconds, refused] for n, (seconds, refused) in enumerate(failovers)]
    print(table(["failover", "kill to first 202 s", "submissions refused meanwhile"], rows))
    print(f"\nfailover_median_s={statistics.median(s for s, _ in failovers):.1f}")


if __name__ == "__main__":
    main()

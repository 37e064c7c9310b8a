"""The cached submission path under load, against a bare Flask + redis-py MGET endpoint, in one run.

    python -m bench.cache [--connections 16] [--seconds 10]      (needs wrk: apt-get install wrk)

Both are served by gunicorn with the same workers and threads; wrk drives them from this machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import psutil
import redis
import requests

from bench.common import arguments, parse, table
from devstack.processes import ApiProcess
from devstack.redis_server import RedisServer
from shared.routing.routes import route_for
from shared.settings import Settings
from shared.store.keys import Keys
from shared.store.redis_client import cache_redis
from shared.store.sentence_cache import SentenceCache
from shared.store.workers import WorkerRegistry

log = logging.getLogger("bench.cache")
SENTENCES = ["今天天气很好。", "明天可能会下雨，记得带伞。", "谢谢你的帮助！"]
NAMESPACE = "bench-namespace"


def wrk(url: str, body: str, connections: int, seconds: int, workdir: Path) -> dict:
    script = workdir / "post.lua"
    script.write_text(
        f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = {json.dumps(body, ensure_ascii=False)}\n'
    )
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    percentiles = {}
    for q in ("50", "99"):
        value, unit = re.search(rf"\s{q}(?:\.000)?%\s+([\d.]+)(us|ms|s)", out).groups()
        percentiles[q] = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {
        "rate": rate,
        "p50": percentiles["50"],
        "p99": percentiles["99"],
        "errors": int(non_2xx.group(1)) if non_2xx else 0,
    }


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far."""
    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def measured(
    url: str, body: str, args: argparse.Namespace, workdir: Path, server_pids: list[int], redis_pids: list[int]
) -> dict:
    """One wrk run, with the CPU its server and the two Redis servers spent per request."""
    server_before, redis_before = cpu_seconds(server_pids), cpu_seconds(redis_pids)
    run = wrk(url, body, args.connections, args.seconds, workdir)
    requests_done = max(1.0, run["rate"] * args.seconds)
    run["server_us"] = (cpu_seconds(server_pids) - server_before) / requests_done * 1e6
    run["redis_us"] = (cpu_seconds(redis_pids) - redis_before) / requests_done * 1e6
    return run


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=5, help="length of one measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating measurements of each endpoint")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn processes for both servers")
    parser.add_argument("--threads", type=int, default=8, help="threads per process with --worker-class gthread")
    parser.add_argument(
        "--worker-class", default=None, help="gunicorn worker class for both servers (default: the API's own, gevent)"
    )
    args = parse(parser)
    if not shutil.which("wrk"):
        raise SystemExit("bench.cache needs wrk (apt-get install wrk)")

    with (
        tempfile.TemporaryDirectory(prefix="transq-bench-cache-") as tmp,
        RedisServer() as broker,
        RedisServer(policy="allkeys-lru") as cache,
    ):
        workdir = Path(tmp)
        settings = Settings(
            output_guard=False,  # the random-weight model's outputs loop by design
            redis_url=broker.url,
            cache_url=cache.url,
            rate_limit="",
            log_level="WARNING",
            model="bench-model",
        )
        # A warm cache, as a worker leaves it: entries under its namespace, the namespace published.
        SentenceCache(cache_redis(settings), Keys(), settings.cache_ttl).put_many(
            NAMESPACE, {s: f"translation of {s}" for s in SENTENCES}
        )
        broker_client = redis.Redis.from_url(broker.url, decode_responses=True)
        WorkerRegistry(broker_client, Keys(), ttl_seconds=3600).beat("bench", {}, route_for(settings), NAMESPACE)
        api = ApiProcess(settings, workdir / "api.log").start(
            workers=args.workers, threads=args.threads, worker_class=args.worker_class
        )
        bare = ApiProcess(
            settings,
            workdir / "bare.log",
            app="bench.bare_app:create_app()",
            extra_env={"BARE_CACHE_URL": cache.url, "BARE_NAMESPACE": NAMESPACE},
        )
        bare.start(workers=args.workers, threads=args.threads, worker_class=args.worker_class)
        try:
            check = requests.post(f"{api.url}/v1/jobs", json={"texts": SENTENCES}, timeout=5)
            assert check.status_code == 200 and check.json()["cached_sentences"] == 3, check.text
            body = json.dumps({"texts": SENTENCES}, ensure_ascii=False)
            rows = []
            endpoints = {
                "bare Flask + redis-py MGET": f"{bare.url}/bare",
                "transq POST /v1/jobs (all cached)": f"{api.url}/v1/jobs",
            }
            for url in endpoints.values():
                wrk(url, body, args.connections, 2, workdir)  # warm-up
            # Alternate the two, several rounds, and keep the median round: this machine's speed drifts.
            runs: dict[str, list[dict]] = {name: [] for name in endpoints}
            servers = {name: process for name, process in zip(endpoints, (bare, api))}
            redis_pids = [server.process.pid for server in (broker, cache) if server.process]
            for _ in range(args.rounds):
                for name, url in endpoints.items():
                    server = psutil.Process(servers[name].process.pid)
                    server_pids = [server.pid] + [child.pid for child in server.children(recursive=True)]
                    run = measured(url, body, args, workdir, server_pids, redis_pids)
                    if run["errors"]:
                        raise SystemExit(f"{name}: {run['errors']} non-2xx responses; the measurement is void")
                    runs[name].append(run)
            results = {name: sorted(r, key=lambda x: x["rate"])[len(r) // 2] for name, r in runs.items()}
            floor = results["bare Flask + redis-py MGET"]["rate"]
            for name, r in results.items():
                rows.append(
                    [name, r["rate"], r["p50"], r["p99"], r["errors"], r["server_us"], r["redis_us"], r["rate"] / floor]
                )
            jobs_stored = len(broker_client.keys("transq:job:*"))
        finally:
            bare.stop()
            api.stop()
    print(
        f"\n{args.connections} connections, median of {args.rounds} alternating {args.seconds} s runs, gunicorn "
        + (
            f"{args.worker_class} {args.workers} x {args.threads} threads"
            if args.worker_class
            else f"gevent x {args.workers}"
        )
        + ", 3 sentences per request\n"
    )
    headers = ["endpoint", "requests/s", "p50 ms", "p99 ms", "non-2xx", "gunicorn CPU µs/req", "Redis CPU µs/req"]
    print(table([*headers, "÷ bare"], rows))
    transq = results["transq POST /v1/jobs (all cached)"]
    print(f"\nratio_vs_bare={transq['rate'] / floor:.2f} p99_ms={transq['p99']:.1f} jobs_stored={jobs_stored}")


if __name__ == "__main__":
    main()

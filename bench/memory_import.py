"""How long one translation memory import (POST /v1/memories, TRANSQ_MEMORY_MAX_ENTRIES entries as TMX) and one
export (GET /v1/memories/<id>) hold a gevent API worker: gunicorn with ONE gevent worker (api/gunicorn_config.py)
on a private redis-server, a probe asking GET /healthz every 20 ms meanwhile; the probe's worst latency is the
longest stretch the request kept the worker from other requests. Baseline: the probe alone, in the same run.

    python -m bench.memory_import [--entries 100000] [--probe-ms 20]
"""

from __future__ import annotations

import argparse
import logging
import random
import tempfile
import threading
import time
from pathlib import Path
from xml.sax.saxutils import escape

import requests

from bench.common import machine, percentile, table
from bench.engines import cpu_flags
from bench.memory_lookup import memory
from devstack.processes import ApiProcess
from devstack.redis_server import RedisServer
from tests.stack import stack_settings

KEY = {"X-API-Key": "bench-key"}


def tmx(entries: dict[str, str]) -> bytes:
    units = "".join(
        f'<tu><tuv xml:lang="zh"><seg>{escape(s)}</seg></tuv><tuv xml:lang="en"><seg>{escape(t)}</seg></tuv></tu>\n'
        for s, t in entries.items()
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header/><body>\n{units}</body></tmx>'.encode()


def probed(url: str, period: float, action) -> tuple[list[float], float, object]:  # type: ignore[no-untyped-def]
    """Probe latencies (ms) while `action()` runs, its own seconds, and what it returned."""
    latencies: list[float] = []
    stalls: list[tuple[float, float]] = []
    begun = [time.perf_counter()]
    done = threading.Event()

    def probe() -> None:
        with requests.Session() as session:
            while not done.is_set():
                started = time.perf_counter()
                session.get(url + "/healthz", timeout=120)
                latencies.append((time.perf_counter() - started) * 1000)
                stalls.append((latencies[-1], started - begun[0]))
                time.sleep(period)

    thread = threading.Thread(target=probe)
    thread.start()
    time.sleep(0.5)
    started = begun[0] = time.perf_counter()
    result = action()
    took = time.perf_counter() - started
    time.sleep(0.3)
    done.set()
    thread.join()
    worst = sorted(stalls, reverse=True)[:3]
    logging.info("worst probes (ms, s after the request began): %s", [(round(a), round(b, 1)) for a, b in worst])
    return latencies, took, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--probe-ms", type=float, default=20)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    data = tmx(memory(args.entries, random.Random(11)))
    period = args.probe_ms / 1000
    with RedisServer() as server, tempfile.TemporaryDirectory() as tmp:
        settings = stack_settings(
            server.url, Path(tmp) / "no-model", api_keys="bench-key", languages="zh-en", rate_limit="",
            memory_max_bytes=len(data) + 1, memory_max_entries=args.entries, client_storage_bytes=0,
        )  # fmt: skip
        api = ApiProcess(settings, Path(tmp) / "api.log").start(workers=1)
        try:
            form = {"source_lang": "zh", "target_lang": "en"}

            def upload() -> requests.Response:
                files = {"file": ("bench.tmx", data)}
                return requests.post(api.url + "/v1/memories", data=form, files=files, headers=KEY, timeout=600)

            alone, _, _ = probed(api.url, period, lambda: time.sleep(3))
            imported, import_s, created = probed(api.url, period, upload)
            memory_id = created.json()["id"]  # type: ignore[attr-defined]
            export = lambda: requests.get(f"{api.url}/v1/memories/{memory_id}", headers=KEY, timeout=600)  # noqa: E731
            exported, export_s, _ = probed(api.url, period, export)
        finally:
            api.stop()
    print(f"\n{machine()}; CPU flags: {cpu_flags()}\n{args.entries} entries, a TMX of {len(data) / 2**20:.1f} MiB\n")
    rows = [
        ["probe alone (baseline)", "-", len(alone), percentile(alone, 50), max(alone)],
        ["during POST /v1/memories (import)", f"{import_s:.1f}", len(imported), percentile(imported, 50), max(imported)],
        ["during GET /v1/memories/<id> (export)", f"{export_s:.1f}", len(exported), percentile(exported, 50), max(exported)],
    ]  # fmt: skip
    print(table(["one gevent worker", "request s", "probes", "probe p50 ms", "probe worst ms"], rows))


if __name__ == "__main__":
    main()

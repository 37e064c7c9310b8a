"""Fairness: one-sentence jobs submitted while one big job runs, with the fair slice on (the default)
and off (a round runs its jobs to the end, as before), against the same jobs on an idle worker.

    python -m bench.fairness WORKLOAD [--big 2000] [--small 8]     (WORKLOAD: e.g. ../shared/data/zh_sentences.txt)
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

import requests

from bench.common import arguments, load_workload, machine, opus_shaped_model, parse, percentile, stack_settings, table
from bench.throughput import _seconds
from devstack.processes import ApiProcess, WorkerProcess
from devstack.redis_server import RedisServer

log = logging.getLogger("bench.fairness")


def _latency(job: dict) -> float:
    return _seconds(job["finished_at"]) - _seconds(job["created_at"])


def _wait(session: requests.Session, url: str, job_id: str, timeout: float = 3600) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = session.get(f"{url}/v1/jobs/{job_id}", timeout=30).json()
        if job["status"] not in ("queued", "running"):
            if job["status"] != "succeeded":
                raise RuntimeError(f"job {job_id} {job['status']}: {job.get('error')}")
            return job
        if time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id} did not finish")
        time.sleep(0.05)


def scenario(model: Path, big: list[str], small: list[str], fair_slice: int, tokens: int, workdir: Path) -> dict:
    """The big job, then one small job every `gap` seconds while it runs; every latency measured."""
    broker, cache = RedisServer().start(), RedisServer(policy="allkeys-lru").start()
    settings = stack_settings(
        model,
        broker.url,
        cache.url,
        tokens=tokens,
        fair_slice_batches=fair_slice,
        max_sentences=2 * len(big),
        max_texts=len(big),
        max_chars=10**7,
        max_body_bytes=2**26,
    )
    api = ApiProcess(settings, workdir / f"api-{fair_slice}.log")
    worker = WorkerProcess(settings, workdir / f"worker-{fair_slice}.log")
    session = requests.Session()
    try:
        api.start(workers=1)
        worker.start(wait_ready=True, timeout=300)
        # Alone first: each small job on the idle worker (also warms it up).
        alone = [_latency(_wait(session, api.url, _submit(session, api.url, [s]))) for s in small[:3]]
        big_id = _submit(session, api.url, big)
        while session.get(f"{api.url}/v1/jobs/{big_id}", timeout=30).json()["progress"]["sentences_done"] == 0:
            time.sleep(0.05)
        ids = []
        for sentence in small[3:]:
            ids.append(_submit(session, api.url, [sentence]))
            time.sleep(1.0)
        smalls = [_wait(session, api.url, i) for i in ids]
        big_job = _wait(session, api.url, big_id)
        big_end = _seconds(big_job["finished_at"])
        return {
            "alone": alone,
            "latencies": [_latency(j) for j in smalls],
            "finished": [round(_seconds(j["finished_at"]) - _seconds(big_job["created_at"]), 2) for j in smalls],
            "created": [round(_seconds(j["created_at"]) - _seconds(big_job["created_at"]), 2) for j in smalls],
            "before_big": sum(_seconds(j["finished_at"]) < big_end for j in smalls),
            "big_rate": len(big) / _latency(big_job),
        }
    finally:
        worker.stop()
        api.stop()
        broker.stop()
        cache.stop()


def _submit(session: requests.Session, url: str, texts: list[str]) -> str:
    response = session.post(f"{url}/v1/jobs", json={"texts": texts}, timeout=120)
    response.raise_for_status()
    return response.json()["id"]


def main() -> None:
    parser = arguments(__doc__, workload="required", tokens=32)
    parser.add_argument("--big", type=int, default=2000, help="sentences in the big job (the issue's case: 10000)")
    parser.add_argument("--small", type=int, default=8, help="one-sentence jobs submitted while it runs")
    args = parse(parser)

    workload = load_workload(args.workload, 64)
    model = opus_shaped_model(workload)
    # Distinct sentences of the workload's lengths: the big job's are numbered, the small ones lettered.
    big = [f"第{i}条：{workload[i % len(workload)]}" for i in range(args.big)]
    small = [f"小{i}号：{workload[(7 * i) % len(workload)]}" for i in range(3 + args.small)]
    rows, medians = [], {}
    with tempfile.TemporaryDirectory(prefix="transq-bench-") as tmp:
        for name, fair_slice in (("fair slice off (before)", 0), ("fair slice 2 batches (default)", 2)):
            log.info("%s: a job of %d sentences, %d one-sentence jobs while it runs", name, len(big), args.small)
            r = scenario(model, big, small, fair_slice, args.tokens, Path(tmp))
            medians[fair_slice] = percentile(r["latencies"], 50)
            rows.append(
                [
                    name,
                    r["big_rate"],
                    percentile(r["alone"], 50),
                    medians[fair_slice],
                    max(r["latencies"]),
                    f"{r['before_big']}/{len(r['latencies'])}",
                ]
            )
    print(f"\nopus-mt-zh-en shape, beam 1, outputs forced to {args.tokens} tokens; {machine()}\n")
    headers = [
        "worker",
        "big job sentences/s",
        "small job alone p50 s",
        "small job during big p50 s",
        "max s",
        "small finished before big",
    ]
    print(table(headers, rows))
    print(f"\nsmall_job_wait_ratio={medians[0] / medians[2]:.1f} (p50 during the big job, slice off / on)")


if __name__ == "__main__":
    main()

"""Takeover: a worker SIGKILLed in the middle of a job (the issue's case: two workers, 228 sentences, killed
at 108 done), with Celery's visibility timeout at its production 900 s, so that only the job's lease can hand
it to the live worker. Measured: kill -> the live worker claims it, kill -> it is finished, against the same
job on the same two workers with no kill (the baseline, in the same run).

    python -m bench.takeover [--sentences 228] [--kill-at 108] [--leases 15,3] [--heartbeats 5,0.5]

The tiny offline test model (worker.translation.model.offline_model), outputs forced to --tokens tokens and batches of
--batch sentences so that a job lasts some seconds: the takeover depends on the lease, the heartbeat and
the broker, not on the model.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from pathlib import Path

import redis

from bench.common import CACHE_DIR, arguments, machine, parse, table
from devstack.processes import ApiProcess, WorkerProcess
from devstack.redis_server import RedisServer
from shared.settings import Settings
from shared.store.keys import Keys
from transq_cli.client import TransqClient

log = logging.getLogger("bench.takeover")


def tiny_model() -> Path:
    folder = CACHE_DIR / "tiny-test-model"
    if not (folder / "config.json").exists():
        from worker.translation.model.offline_model import make_test_model

        log.info("building the tiny test model in %s (once)", folder)
        make_test_model(folder)
    return folder


def _job(count: int, tag: str) -> list[str]:
    return ["".join(f"{tag}第{i}句话的内容。" for i in range(count))]


def scenario(model: Path, args: argparse.Namespace, lease: float, heartbeat: float, workdir: Path) -> dict:
    broker = RedisServer().start()
    settings = Settings(
        redis_url=broker.url,
        cache_url=broker.url,
        model=str(model),
        output_guard=False,  # forced-length outputs repeat by design
        max_new_tokens=args.tokens,
        min_new_tokens=args.tokens,
        max_batch_sentences=args.batch,
        lease_seconds=lease,
        heartbeat_seconds=heartbeat,
        visibility_timeout=900,
        rate_limit="",
        log_level=os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
    )
    api = ApiProcess(settings, workdir / f"api-{lease}.log")
    workers = [WorkerProcess(settings, workdir / f"w{i}-{lease}.log", name=f"w{i}") for i in (1, 2)]
    r = redis.Redis.from_url(broker.url, decode_responses=True)
    keys = Keys(settings.key_prefix)
    try:
        api.start(workers=1)
        for worker in workers:
            worker.start(timeout=300)
        client = TransqClient(api.url)
        started = time.monotonic()
        client.wait(client.submit(_job(args.sentences, "基线"))["id"], timeout=600)
        baseline = time.monotonic() - started

        job_id = client.submit(_job(args.sentences, "杀死"))["id"]
        started = time.monotonic()
        while int(r.hget(keys.job(job_id), "sentences_done") or 0) < args.kill_at:
            time.sleep(0.01)
        done_at_kill = int(r.hget(keys.job(job_id), "sentences_done"))
        holder_id = r.hget(keys.job(job_id), "worker")
        (holder,) = [w for w in workers if w.holds(holder_id)]
        killed = time.monotonic()
        holder.kill_all()
        while r.hget(keys.job(job_id), "worker") == holder_id:
            time.sleep(0.01)
        claimed = time.monotonic()
        done = client.wait(job_id, timeout=600)
        finished = time.monotonic()
        if done["status"] != "succeeded":
            raise RuntimeError(f"job {job_id} {done['status']}: {done.get('error')}")
        record = r.hgetall(keys.job(job_id))
        return {
            "baseline": baseline,
            "total": finished - started,
            "done_at_kill": done_at_kill,
            "to_claim": claimed - killed,
            "to_finish": finished - killed,
            "attempts": record["attempts"],
            "translated": int(r.hget(keys.stats, "sentences_translated") or 0) - args.sentences,
        }
    finally:
        for worker in workers:
            worker.stop()
        api.stop()
        broker.stop()


def main() -> None:
    parser = arguments(__doc__, tokens=8)
    parser.add_argument("--sentences", type=int, default=228)
    parser.add_argument("--kill-at", type=int, default=108, help="kill the job's worker once this many are done")
    parser.add_argument("--leases", default="15,3", help="TRANSQ_LEASE_SECONDS values (15: the default)")
    parser.add_argument("--heartbeats", default="5,0.5", help="TRANSQ_HEARTBEAT_SECONDS, one per lease")
    parser.add_argument("--batch", type=int, default=4, help="TRANSQ_MAX_BATCH_SENTENCES")
    args = parse(parser)
    model = tiny_model()
    rows = []
    with tempfile.TemporaryDirectory(prefix="transq-bench-") as tmp:
        for lease, heartbeat in zip(
            (float(x) for x in args.leases.split(",")), (float(x) for x in args.heartbeats.split(","))
        ):
            log.info("lease %.1fs, heartbeat %.1fs: baseline job, then the killed one", lease, heartbeat)
            m = scenario(model, args, lease, heartbeat, Path(tmp))
            rows.append(
                [
                    f"{lease:g} s / {heartbeat:g} s",
                    m["baseline"],
                    f"{m['done_at_kill']}/{args.sentences}",
                    m["to_claim"],
                    m["to_finish"],
                    m["total"],
                    m["attempts"],
                    f"{m['translated']}/{args.sentences}",
                ]
            )
    print(f"\ntwo workers, tiny test model, visibility timeout 900 s; {machine()}\n")
    headers = [
        "lease / heartbeat",
        "job, no kill s",
        "done at kill",
        "kill -> claimed by the other s",
        "kill -> finished s",
        "job with kill s",
        "attempts",
        "sentences translated",
    ]
    print(table(headers, rows))


if __name__ == "__main__":
    main()

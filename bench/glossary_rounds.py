"""A one-sentence job's wait while a big job of glossary sentences runs, against the same big job without a
glossary; and whether the big job finishes within a short task time limit (its rounds parked at their time
slice and resumed). The tiny test model, settings as tests/reliability/test_glossary_rounds.py.

    python -m bench.glossary_rounds [--big 1500] [--runs 3] [--soft-limit 6]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from devstack.processes import ApiProcess, WorkerProcess
from devstack.redis_server import RedisServer
from shared.settings import Settings
from transq_cli.client import TransqClient


def run(client: TransqClient, big: int, tag: str, glossary: dict[str, str] | None) -> tuple[float, str, str, float]:
    """(the small job's wait, the big job's status when it finished, the big job's final status, its seconds)."""
    sentences = [f"第{i}号{tag}文件在北京。" for i in range(big)]
    started = time.monotonic()
    job = client.submit(["".join(sentences[i : i + 100]) for i in range(0, big, 100)], glossary=glossary)["id"]
    while client.job(job)["status"] != "running":
        time.sleep(0.05)
    time.sleep(1.0)
    submitted = time.monotonic()
    small = client.wait(client.submit([f"小工作{tag}。"], glossary=glossary)["id"], timeout=600, interval=0.05)
    waited = time.monotonic() - submitted
    assert small["status"] == "succeeded", small
    during = client.job(job)["status"]
    final = client.wait(job, timeout=900, interval=0.2)
    return waited, during, final["status"], time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", type=int, default=1500, help="sentences in the big job")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--soft-limit", type=int, default=6, help="TRANSQ_TASK_SOFT_TIME_LIMIT")
    args = parser.parse_args()
    from worker.translation.model.offline_model import make_test_model

    with tempfile.TemporaryDirectory(prefix="transq-bench-") as tmp:
        model = make_test_model(Path(tmp) / "tiny")
        redis = RedisServer().start()
        settings = Settings(
            redis_url=redis.url,
            cache_url=redis.url,
            model=str(model),
            rate_limit="",
            log_level="WARNING",
            task_soft_time_limit=args.soft_limit,
            task_time_limit=args.soft_limit + 10,
            visibility_timeout=args.soft_limit + 40,
            torch_threads=1,
            max_new_tokens=64,
            min_new_tokens=64,
            max_batch_sentences=8,
        )
        api, worker = ApiProcess(settings, Path(tmp) / "api.log"), WorkerProcess(settings, Path(tmp) / "worker.log")
        try:
            api.start()
            worker.start(wait_ready=True, timeout=300)
            client = TransqClient(api.url)
            for name, glossary in (("no glossary", None), ("glossary", {"北京": "Beijing"})):
                results = [run(client, args.big, f"{name[0]}{n}", glossary) for n in range(args.runs)]
                waits = [r[0] for r in results]
                print(
                    f"{name:12} small job wait s: median {statistics.median(waits):.2f} max {max(waits):.2f}"
                    f" | big job when the small one finished: {[r[1] for r in results]}"
                    f" | big job: {[r[2] for r in results]} in {[round(r[3], 1) for r in results]} s"
                )
        finally:
            worker.stop()
            api.stop()
            redis.stop()


if __name__ == "__main__":
    main()

"""Worker memory by model quantization and beam size: resident idle, peak at the largest default batch,
and the container limit to give it. The fp32 worker is the baseline, measured in the same run.

    python -m bench.memory WORKLOAD [--rows 32,48,64]   (int8 also at these batch budgets)
"""

from __future__ import annotations

import logging
import math
import tempfile
import time
from pathlib import Path

import psutil
import requests

from bench.common import arguments, load_workload, machine, opus_shaped_model, parse, peak_rss_mb, table
from devstack.processes import ApiProcess, WorkerProcess
from devstack.redis_server import RedisServer
from shared.settings import Settings

log = logging.getLogger("bench.memory")


def measure(
    model: Path,
    sentences: list[str],
    quantize: str,
    beams: int,
    tokens: int,
    workdir: Path,
    rows: int | None = None,
    preload: str = "",
) -> tuple:
    with RedisServer() as server:
        settings = Settings(
            output_guard=False,  # the random-weight model's outputs loop by design
            redis_url=server.url,
            model=str(model),
            quantize=quantize,
            num_beams=beams,
            max_new_tokens=tokens,
            min_new_tokens=tokens,
            max_batch_sentences=rows or Settings().max_batch_sentences,
            rate_limit="",
            log_level="WARNING",
        )
        api = ApiProcess(settings, workdir / "api.log").start(workers=1, threads=2)
        worker = WorkerProcess(settings, workdir / f"worker-{quantize}-{beams}.log", preload=preload).start(timeout=300)
        try:
            child = worker.child_pids()[0]
            idle = psutil.Process(child).memory_info().rss / 2**20
            parent = psutil.Process(worker.process.pid).memory_full_info().uss / 2**20
            # The budget's worth of the longest sentences: full batches (the budget's rows at beam 1,
            # rows / 4 sentences four times at beam 4), padded to the longest: the worst case.
            longest = sorted(sentences, key=len, reverse=True)[: settings.max_batch_sentences]
            job = requests.post(f"{api.url}/v1/jobs", json={"texts": longest}, timeout=30).json()
            while requests.get(f"{api.url}/v1/jobs/{job['id']}", timeout=30).json()["status"] in ("queued", "running"):
                time.sleep(0.2)
            return idle, peak_rss_mb(child), parent
        finally:
            worker.stop()
            api.stop()


def main() -> None:
    parser = arguments(__doc__, workload="required", tokens=32)
    parser.add_argument("--rows", default="", help="other batch budgets (rows) to measure int8 at, e.g. 48,64")
    args = parse(parser)
    sentences = load_workload(args.workload, 64)
    model = opus_shaped_model(sentences)
    default = Settings().max_batch_sentences
    budgets = [("none", default), ("int8", default)] + [("int8", int(r)) for r in args.rows.split(",") if r]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for quantize, budget in budgets:
            for beams in (1, 4):
                log.info("quantize=%s beams=%d rows=%d", quantize, beams, budget)
                idle, peak, _ = measure(model, sentences, quantize, beams, args.tokens, Path(tmp), budget)
                # The peak, plus the memory guard's 128 MiB headroom, plus a quarter, in 128 MiB steps.
                limit = math.ceil((peak + 128) * 1.25 / 128) * 128
                name = f"opus-mt-zh-en shape, {quantize}" + ("" if budget == default else f", {budget} rows")
                rows.append([name, beams, idle, peak, f"{limit} MiB"])
    print(
        f"\none job of the longest sentences, as many as the batch budget has rows (full batches), outputs "
        f"forced to {args.tokens} tokens, default budget {default} rows; {machine()}\n"
    )
    print(table(["model, quantization", "beam", "idle RSS MiB", "peak RSS MiB", "container limit"], rows))
    # The Celery parent: it holds no model, and since stop 11 imports no torch either. The baseline is the
    # same worker whose parent imports the model stack before forking, as it did before, in this run.
    print("\nint8, beam 1: the Celery parent with and without the model stack imported before forking\n")
    parent_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, preload in (
            ("parent imports torch (before)", "worker.translation.model.engine"),
            ("parent without torch (now)", ""),
        ):
            _, peak, parent = measure(model, sentences, "int8", 1, args.tokens, Path(tmp), preload=preload)
            parent_rows.append([name, parent, peak, parent + peak])
    headers = ["Celery parent", "parent USS MiB", "pool process peak RSS MiB", "parent USS + pool peak MiB"]
    print(table(headers, parent_rows))


if __name__ == "__main__":
    main()

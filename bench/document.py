"""Re-translating an edited document: a Markdown document of 500+ sentences translated once, then again
with 10 % of its sentences changed (only those reach the model; the rest come from the sentence cache),
then unchanged. The first run is the baseline of the same run.

    python -m bench.document WORKLOAD [--sentences 600] [--edited 0.10]   (WORKLOAD: ../shared/data/zh_sentences.txt)
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import tempfile
import time
from pathlib import Path

import requests

from bench.common import load_workload, machine, opus_shaped_model, table
from bench.throughput import _seconds
from devstack.processes import ApiProcess, DocumentStageProcess, WorkerProcess
from devstack.redis_server import RedisServer
from shared.settings import Settings

log = logging.getLogger("bench.document")


def build_markdown(sentences: list[str]) -> str:
    """Sections of two paragraphs of five sentences, a bold phrase now and then."""
    out = []
    for start in range(0, len(sentences), 10):
        out.append(f"## 第{start // 10 + 1}节\n")
        for half in (sentences[start : start + 5], sentences[start + 5 : start + 10]):
            if half:
                first, *rest = half
                out.append(f"**{first}**" + "".join(rest) + "\n")
    return "\n".join(out)


def run_document(session: requests.Session, url: str, name: str, text: str) -> dict:
    started = time.monotonic()
    response = session.post(f"{url}/v1/documents", files={"file": (name, io.BytesIO(text.encode()))}, timeout=60)
    response.raise_for_status()
    job = response.json()
    while job["status"] in ("parsing", "queued", "running", "rendering"):
        time.sleep(0.05)
        job = session.get(f"{url}/v1/jobs/{job['id']}", timeout=30).json()
    if job["status"] != "succeeded":
        raise RuntimeError(f"job {job['id']} {job['status']}: {job.get('error')}")
    document = session.get(f"{url}/v1/jobs/{job['id']}/document", timeout=60)
    document.raise_for_status()
    job["wall"] = time.monotonic() - started
    job["service"] = _seconds(job["finished_at"]) - _seconds(job["created_at"])
    return job


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workload", help="text file of Chinese sentences, e.g. ../shared/data/zh_sentences.txt")
    parser.add_argument("--sentences", type=int, default=600, help="sentences in the document (at least 500)")
    parser.add_argument("--edited", type=float, default=0.10, help="share of the sentences changed")
    parser.add_argument("--tokens", type=int, default=32, help="every output is forced to this many tokens")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    workload = load_workload(args.workload, 64)
    model = opus_shaped_model(workload)
    # Each one a sentence of its own (a terminator where the workload line has none).
    original = [
        f"第{i}条：{s if s[-1] in '。！？!?' else s + '。'}"
        for i, s in ((i, workload[i % len(workload)]) for i in range(args.sentences))
    ]
    step = max(1, round(1 / args.edited))
    edited = [f"修改过的第{i}条：{s}" if i % step == step // 2 else s for i, s in enumerate(original)]
    changed = sum(a != b for a, b in zip(original, edited))
    with tempfile.TemporaryDirectory(prefix="transq-bench-") as tmp:
        broker, cache = RedisServer().start(), RedisServer(policy="allkeys-lru").start()
        settings = Settings(
            output_guard=False,  # the random-weight model's outputs loop by design
            redis_url=broker.url,
            cache_url=cache.url,
            model=str(model),
            num_beams=1,
            max_new_tokens=args.tokens,
            min_new_tokens=args.tokens,
            rate_limit="",
            log_level=os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
        )
        api = ApiProcess(settings, Path(tmp) / "api.log")
        worker = WorkerProcess(settings, Path(tmp) / "worker.log")
        stage = DocumentStageProcess(settings, Path(tmp) / "documents.log", name="documents")
        session = requests.Session()
        try:
            api.start(workers=1)
            stage.start(wait_ready=True)
            worker.start(wait_ready=True, timeout=300)
            run_document(session, api.url, "warm-up.md", "# 预热\n\n预热的句子。\n")
            runs = []
            for label, sentences in (("first translation", original), ("10 % edited", edited), ("unchanged", edited)):
                log.info("%s: %d sentences", label, len(sentences))
                runs.append((label, run_document(session, api.url, "report.md", build_markdown(sentences))))
        finally:
            worker.stop()
            stage.stop()
            api.stop()
            broker.stop()
            cache.stop()
    first = runs[0][1]["wall"]
    rows = [
        [
            label,
            job["progress"]["sentences_total"],
            job["progress"]["sentences_total"] - job["cached_sentences"],
            job["cached_sentences"],
            job["wall"],
            job["wall"] / first,
        ]
        for label, job in runs
    ]
    print(
        f"\nopus-mt-zh-en shape, int8, beam 1, outputs forced to {args.tokens} tokens; a Markdown document of "
        f"{args.sentences} sentences ({changed} changed in the edit); {machine()}\n"
    )
    headers = ["run", "units", "translated by the model", "from the cache", "upload to download s", "ratio to first"]
    print(table(headers, rows))
    print(f"\nedited_to_first_ratio={runs[1][1]['wall'] / first:.3f}")


if __name__ == "__main__":
    main()

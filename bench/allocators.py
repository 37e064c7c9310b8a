"""Peak RSS of transq's engine (int8, as the worker runs it) by memory allocator, CTranslate2 int8 beside it.

    python -m bench.allocators [WORKLOAD] [--sentences 16] [--beams 1,4] [--compare-tree DIR]

Each variant runs bench.engine_child alone in a child process (its peak RSS, VmHWM, is its own) on the
opus-mt-zh-en-shaped model (bench.common.opus_shaped_model), outputs forced to 32 tokens, the batch sizes
of bench.engines: glibc malloc as it is, glibc with MALLOC_ARENA_MAX=2, and jemalloc / tcmalloc (LD_PRELOAD,
where the library is installed: Debian's libjemalloc2 and libtcmalloc-minimal4). `--compare-tree`: another
checkout of transq (e.g. `git archive` of an older commit) whose engine runs too, with glibc, as the baseline.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import load_workload, machine, opus_shaped_model, table
from bench.engines import BATCH, DEFAULT_WORKLOAD, cpu_flags, ctranslate2_model, source_pieces

log = logging.getLogger("bench.allocators")
LIBRARIES = Path("/usr/lib/x86_64-linux-gnu")
VARIANTS = {
    "glibc": {},
    "glibc, MALLOC_ARENA_MAX=2": {"MALLOC_ARENA_MAX": "2"},
    "jemalloc": {"LD_PRELOAD": str(LIBRARIES / "libjemalloc.so.2")},
    "tcmalloc-minimal": {"LD_PRELOAD": str(LIBRARIES / "libtcmalloc_minimal.so.4")},
}


def run(engine: str, model: Path, job: dict, workdir: Path, extra_env: dict, tree: str | None = None) -> dict:
    job_file = workdir / "job.json"
    job_file.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "bench.engine_child", engine, str(model), str(job_file)],
        capture_output=True,
        text=True,
        cwd=tree,
        env={**os.environ, **extra_env, **({"PYTHONPATH": tree} if tree else {})},
    )
    if out.returncode != 0:
        raise RuntimeError(f"{engine} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", nargs="?", default=str(DEFAULT_WORKLOAD))
    parser.add_argument("--sentences", type=int, default=16)
    parser.add_argument("--beams", default="1,4")
    parser.add_argument("--compare-tree", default="", help="another checkout of transq: its engine runs too (glibc)")
    parser.add_argument("--threads", type=int, default=0, help="threads per engine (default: the CPUs allowed)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    all_sentences = load_workload(args.workload, 64)
    sentences = all_sentences[: args.sentences]
    threads = args.threads or len(os.sched_getaffinity(0))
    folder = opus_shaped_model(all_sentences)
    pieces = source_pieces(folder, sentences)
    variants = {name: (env, None) for name, env in VARIANTS.items() if Path(env.get("LD_PRELOAD", "/")).exists()}
    if args.compare_tree:
        variants = {f"glibc, transq @ {Path(args.compare_tree).name}": ({}, args.compare_tree), **variants}
    rows = []
    with tempfile.TemporaryDirectory(prefix="transq-allocators-") as tmp:
        for beams in [int(b) for b in args.beams.split(",")]:
            job = {
                "sentences": sentences,
                "beams": beams,
                "min_new": 32,
                "max_new": 32,
                "batch": BATCH[beams],
                "passes": 1,
                "threads": threads,
            }
            ct2 = run("ctranslate2", ctranslate2_model(folder), {**job, "pieces": pieces}, Path(tmp), {})
            log.info("beam %d: ctranslate2 peak RSS %.0f MiB", beams, ct2["peak_rss_mb"])
            for name, (env, tree) in variants.items():
                result = run("transq", folder, {**job, "pieces": []}, Path(tmp), env, tree)
                log.info("beam %d: transq, %s: peak RSS %.0f MiB", beams, name, result["peak_rss_mb"])
                rate = len(sentences) / result["seconds"]
                peak = result["peak_rss_mb"]
                rows.append([beams, name, rate, peak, peak / ct2["peak_rss_mb"]])
            rows.append([beams, "CTranslate2 int8", len(sentences) / ct2["seconds"], ct2["peak_rss_mb"], 1.0])
    print(
        f"\n{len(sentences)} sentences, forced to 32 tokens, batches of {BATCH[1]} (beam 1) and {BATCH[4]} (beam 4);"
        f" {machine()}; {threads} thread(s); CPU flags: {cpu_flags()}\n"
    )
    print(table(["beam", "allocator", "sentences/s", "peak RSS MiB", "÷ CT2"], rows))


if __name__ == "__main__":
    main()

"""Noisy neighbours: each engine quiet, beside one and two CPU burners, and under a cgroup CPU quota.

    python -m bench.contention [--quick] [--beams 1] [--quota 1.0] [--rounds 2]

The realistic workload (bench.engines; `--workload forced-32` for the other one), each engine alone in a child process as bench.engines runs it, in
four conditions: quiet; beside one and two `python3 -c "while True: pass"` burners (started before the
engine, ended after it); and in a child cgroup whose CPU quota is `--quota` CPUs (cgroup v2 cpu.max or v1
cfs, we are root). The table gives sentences/s and each engine's ratio to its own quiet speed; the last line,
`vs_quiet`, puts transq's ratios beside CTranslate2's. Engines: `transq` (the default: OpenMP's spin bounded,
the thread count following the CPU it gets), `transq-spin` (as before: libgomp's default spin, a fixed team
of the allowed CPUs) and `ctranslate2` (its team of the allowed CPUs).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from bench.common import load_workload, machine, opus_shaped_model, table
from bench.engines import BATCH, DEFAULT_WORKLOAD, cpu_flags, ctranslate2_model, source_pieces
from bench.realistic_model import MAX_NEW_TOKENS, realistic_model

log = logging.getLogger("bench.contention")
BURNER = "while True: pass"


@contextmanager
def burners(count: int) -> Iterator[None]:
    """`count` busy Python processes for the duration (ended by their pid)."""
    started = [subprocess.Popen([sys.executable, "-c", BURNER]) for _ in range(count)]
    try:
        yield
    finally:
        for process in started:
            process.kill()
            process.wait()


@contextmanager
def cpu_quota(cpus: float) -> Iterator[Path | None]:
    """A child cgroup limited to `cpus` CPUs (v2 cpu.max where the cpu controller is on v2, else v1 cfs);
    yields its cgroup.procs file (None where neither can be made)."""
    period = 100_000
    quota = int(cpus * period)
    candidates = [
        (Path("/sys/fs/cgroup"), "cpu.max", f"{quota} {period}"),
        (Path("/sys/fs/cgroup/cpu"), "cpu.cfs_quota_us", str(quota)),
    ]
    for root, name, value in candidates:
        folder = root / f"transq-bench-{os.getpid()}"
        try:
            if name == "cpu.max" and "cpu" not in (root / "cgroup.controllers").read_text().split():
                continue
            if name == "cpu.max":
                (root / "cgroup.subtree_control").write_text("+cpu")
            folder.mkdir()
        except OSError:
            continue
        try:
            if name == "cpu.cfs_quota_us":
                (folder / "cpu.cfs_period_us").write_text(str(period))
            (folder / name).write_text(value)
            yield folder / "cgroup.procs"
        finally:
            folder.rmdir()
        return
    log.warning("no CPU quota could be set here (no writable cgroup v2 cpu controller or v1 cpu hierarchy)")
    yield None


def run(engine: str, model: Path, job: dict, workdir: Path, procs: Path | None = None) -> dict:
    """One engine in a child process (in the cgroup whose cgroup.procs is `procs`, if any)."""
    job_file = workdir / "job.json"
    job_file.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    env = dict(os.environ)
    if engine == "transq-spin":  # libgomp's own default, which prepare_openmp leaves alone when set
        env["GOMP_SPINCOUNT"] = "300000"
    kind = "transq" if engine.startswith("transq") else engine
    command = [sys.executable, "-m", "bench.engine_child", kind, str(model), str(job_file)]
    if procs is not None:  # the shell joins the cgroup, then becomes the engine
        command = ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", *command]
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{engine} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="16 sentences (default 64)")
    parser.add_argument("--beams", type=int, default=1)
    parser.add_argument("--quota", type=float, default=1.0, help="CPUs of the quota condition")
    parser.add_argument("--rounds", type=int, default=1, help="every condition this many times; best kept")
    parser.add_argument("--engines", default="transq,transq-spin,ctranslate2")
    parser.add_argument("--workload", default="realistic", choices=("realistic", "forced-32"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    sentences = load_workload(str(DEFAULT_WORKLOAD), 64)[: 16 if args.quick else 64]
    build = realistic_model if args.workload == "realistic" else opus_shaped_model
    folder = build(load_workload(str(DEFAULT_WORKLOAD), 64))
    min_new, max_new = (0, MAX_NEW_TOKENS) if args.workload == "realistic" else (32, 32)
    engines = args.engines.split(",")
    allowed = len(os.sched_getaffinity(0))
    conditions = ["quiet", "1 burner", "2 burners", f"quota {args.quota:g} CPU"]
    rates: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="transq-contention-") as tmp:
        pieces = source_pieces(folder, sentences)
        for _ in range(args.rounds):
            for condition in conditions:
                for engine in engines:
                    job = {
                        "sentences": sentences,
                        "pieces": pieces if engine == "ctranslate2" else [],
                        "beams": args.beams,
                        "min_new": min_new,
                        "max_new": max_new,
                        "batch": BATCH[args.beams],
                        "passes": 1,
                        # transq's default follows the CPU it gets; the others keep a team of the allowed CPUs
                        "threads": 0 if engine == "transq" else allowed,
                    }
                    model = ctranslate2_model(folder) if engine == "ctranslate2" else folder
                    with burners(condition.count("burner") and int(condition[0])):
                        with cpu_quota(args.quota) if condition.startswith("quota") else _nothing() as procs:
                            result = run(engine, model, job, Path(tmp), procs)
                    rate = len(sentences) / result["seconds"]
                    log.info("%s, %s: %.2f sentences/s", condition, engine, rate)
                    rates[condition, engine] = max(rate, rates.get((condition, engine), 0.0))
    rows = []
    for engine in engines:
        quiet = rates["quiet", engine]
        for condition in conditions:
            rate = rates[condition, engine]
            rows.append([engine, condition, rate, rate / quiet])
    print(
        f"\n{len(sentences)} sentences, {args.workload} workload, beam {args.beams}, best of {args.rounds} round(s);"
        f" {machine()}; {allowed} CPU(s) allowed; CPU flags: {cpu_flags()}\n"
    )
    print(table(["engine", "condition", "sentences/s", "÷ own quiet"], rows))
    if "ctranslate2" in engines:
        ratios = " ".join(
            f"{c.replace(' ', '_')}={rates[c, 'transq'] / rates['quiet', 'transq']:.2f}/"
            f"{rates[c, 'ctranslate2'] / rates['quiet', 'ctranslate2']:.2f}"
            for c in conditions[1:]
        )
        print(f"\nvs_quiet (transq/ctranslate2) {ratios}")


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    main()

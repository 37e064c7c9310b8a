"""transq's engine against transformers' generate() and CTranslate2 int8, side by side in one run.

    python -m bench.engines [WORKLOAD] [--quick]     (WORKLOAD: default bench/data/zh_sentences.txt)

Two workloads on the same sentences: `realistic` (bench/realistic_model.py: outputs end at varied lengths,
about 1.2x the source) and `forced-32` (the random model every other benchmark uses, outputs forced to 32
tokens). Each engine runs alone in a child process (its peak RSS is its own), with the same sentences,
batch size, beam size and thread count; the best of the passes is kept. The last line compares transq's
engine with CTranslate2 on the realistic workload: `vs_ctranslate2 beam1=X beam4=Y` (sentences/s ratio).
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
from bench.realistic_model import MAX_NEW_TOKENS, describe_lengths, realistic_model

log = logging.getLogger("bench.engines")
DEFAULT_WORKLOAD = Path(__file__).parent / "data" / "zh_sentences.txt"
ENGINES = ("transq", "generate", "ctranslate2")
BATCH = {1: 32, 4: 8}  # sentences per batch, the same for every engine
FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_int8")


def cpu_flags() -> str:
    """The instruction-set flags int8 and fp32 speed depend on."""
    try:
        line = next(x for x in Path("/proc/cpuinfo").read_text().splitlines() if x.startswith("flags"))
    except (OSError, StopIteration):
        return "unknown"
    present = set(line.split(":", 1)[1].split())
    return " ".join(f for f in FLAGS if f in present) or "none of " + " ".join(FLAGS)


def ctranslate2_model(folder: Path) -> Path:
    """The model converted to CTranslate2 int8 (once, cached next to it), by CTranslate2's own converter."""
    out = folder.with_name(folder.name + "-ct2-int8")
    if not (out / "model.bin").exists():
        log.info("converting %s to CTranslate2 int8", folder.name)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ctranslate2.converters.transformers",
                "--model",
                str(folder),
                "--output_dir",
                str(out),
                "--quantization",
                "int8",
                "--force",
            ],
            check=True,
            capture_output=True,
        )
    return out


def early_stopping_copy(folder: Path) -> Path:
    """The model with `early_stopping: true` in its generation config (transformers' rule: a sentence is done
    once `num_beams` hypotheses finished), its other files linked (made once, cached next to it)."""
    out = folder.with_name(folder.name + "-early-stopping")
    out.mkdir(exist_ok=True)
    for file in folder.iterdir():
        if file.is_file() and file.name != "generation_config.json" and not (out / file.name).exists():
            (out / file.name).symlink_to(file.resolve())
    config = json.loads((folder / "generation_config.json").read_text(encoding="utf-8"))
    (out / "generation_config.json").write_text(json.dumps({**config, "early_stopping": True}), encoding="utf-8")
    return out


def source_pieces(folder: Path, sentences: list[str]) -> list[list[str]]:
    """What CTranslate2 takes: each sentence's source pieces, ended by </s> (as the engine ends them)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    ids = tokenizer(sentences, add_special_tokens=False)["input_ids"]
    return [tokenizer.convert_ids_to_tokens(list(row) + [tokenizer.eos_token_id]) for row in ids]


def run_child(engine: str, model: Path, job: dict, workdir: Path, tree: str | None = None) -> dict:
    """One engine in a child process; `tree`: another checkout of transq whose engine to run instead."""
    job_file = workdir / "job.json"
    job_file.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": tree} if tree else None
    out = subprocess.run(
        [sys.executable, "-m", "bench.engine_child", engine, str(model), str(job_file)],
        capture_output=True,
        text=True,
        cwd=tree,
        env=env,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{engine} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", nargs="?", default=str(DEFAULT_WORKLOAD))
    parser.add_argument("--quick", action="store_true", help="16 sentences, one pass (under 3 minutes)")
    parser.add_argument("--sentences", type=int, default=0, help="sentences (default 64, 16 with --quick)")
    parser.add_argument("--passes", type=int, default=0, help="passes per engine, best kept (default 2, 1 quick)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run every engine this many times, in turn, and keep each one's best (this machine's speed drifts "
        "by minutes: rounds give every engine the fast and the slow spells)",
    )
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--beams", default="1,4")
    parser.add_argument("--threads", type=int, default=0, help="threads per engine (default: the CPUs allowed)")
    parser.add_argument("--workloads", default="realistic,forced-32")
    parser.add_argument(
        "--compare-tree",
        default="",
        help="another checkout of transq (e.g. `git archive` of an older commit): its engine runs too, as transq@tree",
    )
    parser.add_argument(
        "--full-vocabulary",
        action="store_true",
        help="also run transq's engine with TRANSQ_TARGET_VOCABULARY=0 (the whole output layer)",
    )
    parser.add_argument(
        "--early-stopping",
        action="store_true",
        help="also run transq's engine on the model with early_stopping=true in its generation config",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    all_sentences = load_workload(args.workload, 64)
    count = args.sentences or (16 if args.quick else 64)
    passes = args.passes or (1 if args.quick else 2)
    sentences = all_sentences[:count]
    models = {  # built on first use (cached)
        "realistic": (lambda: realistic_model(all_sentences), 0, MAX_NEW_TOKENS),
        "forced-32": (lambda: opus_shaped_model(all_sentences), 32, 32),
    }
    engines = args.engines.split(",")
    threads = args.threads or len(os.sched_getaffinity(0))
    if args.full_vocabulary:
        engines.insert(engines.index("transq") + 1, "transq-full")
    if args.early_stopping:
        engines.insert(engines.index("transq") + 1, "transq-early")
    if args.compare_tree:
        engines.insert(0, "transq@tree")
    best: dict[tuple, list] = {}
    rates, notes = {}, []
    with tempfile.TemporaryDirectory(prefix="transq-engines-") as tmp:
        for round_number in range(args.rounds):
            for workload in args.workloads.split(","):
                build, min_new, max_new = models[workload]
                folder = build()
                ct2 = ctranslate2_model(folder) if "ctranslate2" in engines else None
                pieces = source_pieces(folder, sentences)
                source = [len(p) - 1 for p in pieces]
                if workload == "realistic" and round_number == 0:
                    built = json.loads((folder / "lengths.json").read_text(encoding="utf-8"))
                    notes.append(
                        f"realistic, as built (fp32 greedy, 64 sentences): {describe_lengths(built['greedy_fp32'], built['source'])}"
                    )
                for beams in [int(b) for b in args.beams.split(",")]:
                    for engine in engines:
                        job = {
                            "sentences": sentences,
                            "pieces": pieces if engine == "ctranslate2" else [],
                            "beams": beams,
                            "min_new": min_new,
                            "max_new": max_new,
                            "batch": BATCH[beams],
                            "passes": passes,
                            "threads": threads,
                            "settings": {"target_vocabulary": False} if engine == "transq-full" else {},
                        }
                        log.info("%s, beam %d: %s", workload, beams, engine)
                        tree = args.compare_tree if engine == "transq@tree" else None
                        kind = "transq" if engine.startswith("transq") else engine
                        model = folder if engine != "transq-early" else early_stopping_copy(folder)
                        model = ct2 if engine == "ctranslate2" else model
                        result = run_child(kind, model, job, Path(tmp), tree)
                        rate = len(sentences) / result["seconds"]
                        key = (workload, beams, engine)
                        name = engine if engine != "transq" else f"transq ({result['decoding']})"
                        name = f"transq @ {Path(tree).name}" if tree else name
                        row = [
                            workload,
                            name,
                            beams,
                            rate,
                            result["tokens"] / result["seconds"],
                            result["tokens"] / len(sentences),
                            result["peak_rss_mb"],
                        ]
                        log.info("  %.2f sentences/s, %.1f tokens/s, peak RSS %.0f MiB", *row[3:5], row[6])
                        if rate > rates.get(key, 0.0):
                            rates[key], best[key] = rate, row
                        if engine == "ctranslate2" and workload == "realistic" and round_number == 0:
                            notes.append(
                                f"realistic, CTranslate2 int8 beam {beams}: {describe_lengths(result['lengths'], source)}"
                            )
    rows = list(best.values())
    for row in rows:
        ct2_rate = rates.get((row[0], row[2], "ctranslate2"))
        row.append(row[3] / ct2_rate if ct2_rate else "-")
    print(
        f"\n{len(sentences)} sentences, batches of {BATCH[1]} (beam 1) and {BATCH[4]} (beam 4), best of {passes}"
        f" pass(es) in each of {args.rounds} round(s); {machine()}; {threads} thread(s) per engine; CPU flags: {cpu_flags()}\n"
    )
    headers = ["workload", "engine", "beam", "sentences/s", "tokens/s", "tokens/sentence", "peak RSS MiB", "÷ CT2"]
    print(table(headers, rows))
    print()
    for note in notes:
        print(note)
    ratio = {
        b: rates.get(("realistic", b, "transq"), 0) / rates.get(("realistic", b, "ctranslate2"), float("nan"))
        for b in (1, 4)
    }
    print(f"vs_ctranslate2 beam1={ratio[1]:.2f} beam4={ratio[4]:.2f}")


if __name__ == "__main__":
    main()

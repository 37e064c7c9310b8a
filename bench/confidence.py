"""What a sentence's confidence costs: transq's engine decoding the same batches with and without `scores`
(worker.translation.model.confidence), interleaved pass by pass in one run (the order alternating), best pass of each kept. The worker always asks
for scores (worker.translation.round.batch_runner), so this is the whole cost of the feature.

    python -m bench.confidence [WORKLOAD] [--models copy,opus] [--beams 1,4] [--sentences 32] [--passes 5]

`copy`: the tests' tiny copy model; `opus`: the opus-mt-zh-en-shaped random model (bench/common.py) with its
outputs forced to 32 tokens, int8, as the other benchmarks run it. The last column is the extra time with
scores, in per cent of the time without.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

from bench.common import load_workload, machine, opus_shaped_model, table
from bench.engines import BATCH, DEFAULT_WORKLOAD, cpu_flags

log = logging.getLogger("bench.confidence")


def engine_for(name: str, workload: list[str], beams: int):  # type: ignore[no-untyped-def]
    from shared.settings import Settings
    from worker.translation.model.engine import TranslationEngine
    from worker.translation.model.offline_model import make_test_model

    if name == "copy":
        folder = make_test_model(Path(tempfile.mkdtemp(prefix="transq-copy-")) / "tiny")
        settings = Settings(model=str(folder), num_beams=beams, output_guard=False, max_new_tokens=64)
    else:
        folder = opus_shaped_model(workload)
        settings = Settings(
            model=str(folder),
            num_beams=beams,
            output_guard=False,
            max_new_tokens=32,
            min_new_tokens=32,
            quantize="int8",
            torch_threads=1,
        )
    return TranslationEngine(settings)


def timed(engine, batches: list[list[list[int]]], scores: bool) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    for batch in batches:
        engine.translate_ids(batch, scores=[] if scores else None)
    return time.perf_counter() - started


def measure(name: str, workload: list[str], beams: int, passes: int) -> list[object]:
    engine = engine_for(name, workload, beams)
    ids = engine.token_ids(workload)
    size = BATCH[beams]
    batches = [ids[i : i + size] for i in range(0, len(ids), size)]
    timed(engine, batches[:1], True)  # warm-up
    without, with_scores = [], []
    for number in range(passes):  # the order alternates, so neither side always runs second
        for scores in (False, True) if number % 2 == 0 else (True, False):
            (with_scores if scores else without).append(timed(engine, batches, scores))
    best_off, best_on = min(without), min(with_scores)
    return [name, beams, len(workload), best_off * 1000, best_on * 1000, 100 * (best_on - best_off) / best_off]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", nargs="?", default=str(DEFAULT_WORKLOAD))
    parser.add_argument("--models", default="copy,opus")
    parser.add_argument("--beams", default="1,4")
    parser.add_argument("--sentences", type=int, default=32)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    workload = load_workload(args.workload, args.sentences)
    rows = [
        measure(name, workload, int(beams), args.passes)
        for name in args.models.split(",")
        for beams in args.beams.split(",")
    ]
    print(f"\n{machine()}; CPU flags: {cpu_flags()}; best of {args.passes} interleaved passes\n")
    print(table(["model", "beam", "sentences", "ms without", "ms with scores", "extra %"], rows))


if __name__ == "__main__":
    main()

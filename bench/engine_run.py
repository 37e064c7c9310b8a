"""Run the engine directly in its own process (so its peak RSS is its own) and print JSON.

python -m bench.engine_run MODEL SENTENCES_JSON --beams 1 --tokens 32 --mode ceiling|single
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from bench.common import peak_rss_mb


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("sentences")
    parser.add_argument("--beams", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--mode", choices=["ceiling", "single"], required=True)
    parser.add_argument("--batch-sizes", default="", help="sentences per batch to try (default: by beam size)")
    args = parser.parse_args()

    from shared.settings import Settings
    from worker.batching import plan_batches
    from worker.engine import TranslationEngine

    sentences = json.loads(open(args.sentences, encoding="utf-8").read())
    quantize = "int8" if args.mode == "ceiling" else "none"
    settings = Settings(
        model=args.model,
        num_beams=args.beams,
        max_new_tokens=args.tokens,
        min_new_tokens=args.tokens,
        quantize=quantize,
    )
    engine = TranslationEngine(settings)
    ids = engine.token_ids(sentences)
    engine.translate_ids(ids[:2])  # warm-up, as the worker does at start
    results = []
    if args.mode == "single":
        latencies = []
        started = time.perf_counter()
        for one in ids:
            t0 = time.perf_counter()
            engine.translate_ids([one])
            latencies.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - started
        results.append({"batch": 1, "rate": len(ids) / elapsed, "latencies": latencies})
    else:
        lengths = [len(i) for i in ids]
        sizes = args.batch_sizes or ("16,32,64" if args.beams == 1 else "4,8,16")
        for size in [int(s) for s in sizes.split(",")]:
            batches = plan_batches(lengths, 1 << 30, size)
            best_elapsed = float("inf")
            for _ in range(2):  # the better of two passes: the ceiling is what the engine can do
                started = time.perf_counter()
                for batch in batches:
                    engine.translate_ids([ids[i] for i in batch])
                best_elapsed = min(best_elapsed, time.perf_counter() - started)
            results.append({"batch": size, "rate": len(ids) / best_elapsed, "latencies": [best_elapsed]})
    best = max(results, key=lambda r: r["rate"])
    json.dump(
        {
            "best": best,
            "all": [{k: v for k, v in r.items() if k != "latencies"} for r in results],
            "peak_rss_mb": peak_rss_mb(os.getpid()),
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()

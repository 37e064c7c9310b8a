"""Run the engine directly in its own process (so its peak RSS is its own) and print JSON.

python -m bench.engine_run MODEL SENTENCES_JSON --beams 1 --tokens 32 --mode ceiling|single|stock

ceiling: the engine (int8) in the best batches; single: the engine in fp32, one sentence per call;
stock: the usual way of serving the model, and the baseline: transformers alone, fp32, the model's own
generation config, one sentence per `generate` call.
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
    parser.add_argument("--min-tokens", type=int, default=-1, help="default: --tokens (outputs forced to it)")
    parser.add_argument("--mode", choices=["ceiling", "single", "stock"], required=True)
    parser.add_argument("--batch-sizes", default="", help="sentences per batch to try (default: by beam size)")
    args = parser.parse_args()

    from shared.settings import Settings
    from worker.translation.model.batching import plan_batches
    from worker.translation.model.engine import TranslationEngine

    min_tokens = args.tokens if args.min_tokens < 0 else args.min_tokens
    sentences = json.loads(open(args.sentences, encoding="utf-8").read())
    if args.mode == "stock":
        results = [stock_generate(args.model, sentences, args.beams, args.tokens, min_tokens)]
        json.dump({"best": results[0], "all": [], "peak_rss_mb": peak_rss_mb(os.getpid())}, sys.stdout)
        return
    quantize = "int8" if args.mode == "ceiling" else "none"
    settings = Settings(
        output_guard=False,  # the random-weight model's outputs loop by design
        model=args.model,
        num_beams=args.beams,
        max_new_tokens=args.tokens,
        min_new_tokens=min_tokens,
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


def stock_generate(model_dir: str, sentences: list[str], beams: int, tokens: int, min_tokens: int) -> dict:
    """One sentence per `model.generate` call, fp32, nothing of transq's: the single-sentence baseline."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir).eval()
    args = {"num_beams": beams, "max_new_tokens": tokens, "min_new_tokens": min_tokens, "do_sample": False}
    latencies = []
    with torch.inference_mode():
        model.generate(**tokenizer(sentences[:1], return_tensors="pt"), **args)  # warm-up
        started = time.perf_counter()
        for sentence in sentences:
            t0 = time.perf_counter()
            tokenizer.batch_decode(model.generate(**tokenizer([sentence], return_tensors="pt"), **args))
            latencies.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - started
    return {"batch": 1, "rate": len(sentences) / elapsed, "latencies": latencies}


if __name__ == "__main__":
    main()

"""One engine translating one workload, alone in this process (so its peak RSS is its own); prints JSON.

python -m bench.engine_child ENGINE MODEL JOB_JSON

ENGINE: transq (worker.translation.model.engine.TranslationEngine, int8, as the worker runs it), generate (transformers'
generate() on the same int8 model, batched the same way) or ctranslate2 (the model converted to
CTranslate2, int8). JOB_JSON holds the sentences (and, for CTranslate2, their source pieces), the beam
size, the output token bounds, the batch size and the number of passes (the best is kept).
"""

from __future__ import annotations

import json
import os
import sys
import time

from bench.common import peak_rss_mb


def run_transq(model: str, job: dict, use_generate: bool) -> tuple[float, list[int], dict]:
    from worker.translation.model.cpu_threads import prepare_openmp

    prepare_openmp()  # as the worker does, before torch loads (an OpenMP variable in `env` is kept)
    from shared.settings import Settings
    from worker.translation.model.batching import plan_batches
    from worker.translation.model.engine import TranslationEngine

    settings = Settings(
        output_guard=False,
        model=model,
        num_beams=job["beams"],
        max_new_tokens=job["max_new"],
        min_new_tokens=job["min_new"],
        quantize="int8",
        torch_threads=job["threads"],
        **job.get("settings", {}),
    )
    engine = TranslationEngine(settings)
    if use_generate:
        engine.decoder = None  # the engine's own batching and model, decoded by transformers' generate()
    ids = engine.token_ids(job["sentences"])
    batches = plan_batches([len(i) for i in ids], 1 << 30, job["batch"])
    engine.translate_ids(ids[:2])  # warm-up, as the worker does at start
    best, lengths = float("inf"), []
    for _ in range(job["passes"]):
        before = engine.tokens_generated
        started = time.perf_counter()
        for batch in batches:
            engine.translate_ids([ids[i] for i in batch])
        best = min(best, time.perf_counter() - started)
        total = engine.tokens_generated - before
    lengths = [total]  # the engine counts tokens per batch, not per sentence
    return best, lengths, {"decoding": "generate" if use_generate else engine.decoding}


def run_ctranslate2(model: str, job: dict) -> tuple[float, list[int], dict]:
    import ctranslate2

    translator = ctranslate2.Translator(model, device="cpu", compute_type="int8", intra_threads=job["threads"])
    pieces = job["pieces"]
    options = {
        "beam_size": job["beams"],
        "max_batch_size": job["batch"],
        "max_decoding_length": job["max_new"],
        "min_decoding_length": job["min_new"],
    }
    translator.translate_batch(pieces[:2], **options)  # warm-up
    best, lengths = float("inf"), []
    for _ in range(job["passes"]):
        started = time.perf_counter()
        results = translator.translate_batch(pieces, **options)
        best = min(best, time.perf_counter() - started)
        # the end token is counted as the other engines count it, except where the output hit the cap
        lengths = [min(len(r.hypotheses[0]) + 1, job["max_new"]) for r in results]
    return best, lengths, {"decoding": "ctranslate2"}


def main() -> None:
    engine, model, job_file = sys.argv[1:4]
    job = json.loads(open(job_file, encoding="utf-8").read())
    if engine == "ctranslate2":
        seconds, lengths, extra = run_ctranslate2(model, job)
    else:
        seconds, lengths, extra = run_transq(model, job, use_generate=engine == "generate")
    json.dump(
        {
            "seconds": seconds,
            "tokens": sum(lengths),
            "lengths": lengths,
            "peak_rss_mb": peak_rss_mb(os.getpid()),
            **extra,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()

"""Where a batch's time goes in transq's engine: encoder, the decoder steps' parts (embeddings, self- and
cross-attention projections, feed-forward, layer norms, output projection, and the rest of a step: the
attention itself, cache writes, residual additions, Python), the cross-attention keys and values (once per
batch), and the decoding loop's top-k/beam bookkeeping. Timed by forward hooks on the int8 model and a
timer around worker.translation.model.fused_decoder's step, realistic workload.

    python -m bench.profile_engine [WORKLOAD] [--beams 1,4] [--sentences 32] [--full-vocabulary] [--threads 1]
"""

from __future__ import annotations

import argparse
import logging
import time
from collections import defaultdict
from pathlib import Path

from bench.common import load_workload, machine, table
from bench.engines import BATCH, DEFAULT_WORKLOAD, cpu_flags
from bench.realistic_model import MAX_NEW_TOKENS, realistic_model
from worker.translation.model.fused_decoder import FusedSteps
from worker.translation.model.fused_projections import fused_qkv

log = logging.getLogger("bench.profile_engine")


class Timers:
    """Accumulated seconds by component, from forward pre/post hooks."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._started: dict[int, float] = {}

    def watch(self, module, name: str) -> None:  # type: ignore[no-untyped-def]
        def before(mod, *_):  # type: ignore[no-untyped-def]
            self._started[id(mod)] = time.perf_counter()

        def after(mod, *_):  # type: ignore[no-untyped-def]
            self.seconds[name] += time.perf_counter() - self._started.pop(id(mod))

        module.register_forward_pre_hook(before)
        module.register_forward_hook(after)


def profile(
    folder: Path, sentences: list[str], beams: int, target_vocabulary: bool, threads: int
) -> tuple[dict, float, int]:
    from shared.settings import Settings
    from worker.translation.model.batching import plan_batches
    from worker.translation.model.engine import TranslationEngine

    engine = TranslationEngine(
        Settings(
            model=str(folder),
            num_beams=beams,
            max_new_tokens=MAX_NEW_TOKENS,
            output_guard=False,
            quantize="int8",
            target_vocabulary=target_vocabulary,
            torch_threads=threads,
        )
    )
    timers = Timers()
    model = engine.model
    timers.watch(model.get_encoder(), "encoder")
    decoder = model.get_decoder()
    timers.watch(decoder.embed_tokens, "embeddings")
    for layer in decoder.layers:
        qkv = fused_qkv(layer.self_attn)  # int8: the three as one product (worker.translation.model.fused_projections)
        projections = [layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj] if qkv is None else [qkv]
        for part in (*projections, layer.self_attn.out_proj):
            timers.watch(part, "self-attention projections")
        for part in (layer.encoder_attn.q_proj, layer.encoder_attn.out_proj):
            timers.watch(part, "cross-attention projections")
        for part in (layer.encoder_attn.k_proj, layer.encoder_attn.v_proj):
            timers.watch(part, "cross-attention keys/values (once per batch)")
        timers.watch(layer.fc1, "feed-forward")
        timers.watch(layer.fc2, "feed-forward")
        for norm in (layer.self_attn_layer_norm, layer.encoder_attn_layer_norm, layer.final_layer_norm):
            timers.watch(norm, "layer norms")
    timers.watch(engine.projection.head, "output projection")
    steps_call = FusedSteps.__call__

    def timed_step(step, tokens):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return steps_call(step, tokens)
        finally:
            timers.seconds["decoder steps (all)"] += time.perf_counter() - started

    FusedSteps.__call__ = timed_step  # type: ignore[method-assign]
    ids = engine.token_ids(sentences)
    batches = plan_batches([len(i) for i in ids], 1 << 30, BATCH[beams])
    engine.translate_ids(ids[:2])
    timers.seconds.clear()
    if not FusedSteps.fits(model):
        raise SystemExit(
            "this profile times worker.translation.model.fused_decoder's steps; the model does not use them"
        )
    before = engine.tokens_generated
    started = time.perf_counter()
    for batch in batches:
        engine.translate_ids([ids[i] for i in batch])
    total = time.perf_counter() - started
    FusedSteps.__call__ = steps_call  # type: ignore[method-assign]
    return dict(timers.seconds), total, engine.tokens_generated - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", nargs="?", default=str(DEFAULT_WORKLOAD))
    parser.add_argument("--beams", default="1,4")
    parser.add_argument("--sentences", type=int, default=32)
    parser.add_argument("--full-vocabulary", action="store_true", help="TRANSQ_TARGET_VOCABULARY=0")
    parser.add_argument("--threads", type=int, default=1, help="the engine's threads (default 1)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    all_sentences = load_workload(args.workload, 64)
    folder = realistic_model(all_sentences)
    rows = []
    for beams in [int(b) for b in args.beams.split(",")]:
        seconds, total, tokens = profile(
            folder, all_sentences[: args.sentences], beams, not args.full_vocabulary, args.threads
        )
        modules = [
            "embeddings",
            "self-attention projections",
            "cross-attention projections",
            "feed-forward",
            "layer norms",
            "output projection",
        ]
        parts = {"encoder": seconds["encoder"], **{name: seconds[name] for name in modules}}
        parts["attention itself (sdpa), cache writes, residuals, Python"] = seconds["decoder steps (all)"] - sum(
            seconds[name] for name in modules
        )
        parts["cross-attention keys/values (once per batch)"] = seconds["cross-attention keys/values (once per batch)"]
        parts["top-k, beam bookkeeping, rules, detokenizing"] = total - sum(parts.values())
        for name, value in parts.items():
            rows.append([beams, name, value * 1000, 100 * value / total])
        rows.append([beams, f"total ({tokens} output tokens)", total * 1000, 100.0])
    print(
        f"\nrealistic workload, {args.sentences} sentences, int8, target vocabulary "
        f"{'off' if args.full_vocabulary else 'on'}, {args.threads} thread(s); {machine()}; CPU flags: {cpu_flags()}\n"
    )
    print(table(["beam", "component", "ms", "%"], rows))


if __name__ == "__main__":
    main()

"""The realistic benchmark model: opus-mt-zh-en's exact shape, random weights, outputs ending at varied lengths.

Every other benchmark forces its outputs to exactly N tokens, so all rows of a batch end together. Real
translations end at different steps. This model is built so they do, offline and deterministically:

1. `make_test_model(shape="opus", target_words=32000)`: opus-mt-zh-en's shape (6+6 layers, d_model 512,
   a joint vocabulary of 65,001) with a target.spm of about 32,300 pieces, as opus-mt's target side has
   about half of the joint vocabulary.
2. A trained Marian decoder puts no weight on pieces outside its target vocabulary: `final_logits_bias`
   is -30 on those columns (exp(-30) x 33,000 columns is below float32's resolution of a log-partition).
3. The end token's bias is tuned. One greedy pass with the end token banned records, for each sentence
   and step, how far the end token's logit lies below the best other one (its margin). With bias b a
   sentence ends at the first step whose margin is below b, and the steps before are unchanged (the bias
   touches the end column only), so that one pass gives the output lengths for every b. b is bisected
   so that the mean output is 1.2x the mean source length (in tokens); the spread comes from the
   input-dependent margins. The lengths are written to `lengths.json` and printed by bench.engines.

The engines see the same files: transformers and transq load the folder, CTranslate2 converts it.
"""

from __future__ import annotations

import json
import logging
import statistics
from pathlib import Path

from bench.common import CACHE_DIR

log = logging.getLogger("bench.realistic_model")
LENGTH_RATIO = 1.2  # mean output tokens per source token
OUTSIDE_TARGET_BIAS = -30.0
MAX_NEW_TOKENS = 128  # the benchmark's cap on output tokens (both workloads' engines get the same)


def target_ids(folder: Path) -> list[int]:
    """The joint vocabulary's ids of the target.spm pieces, and the end token."""
    import sentencepiece as spm

    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    processor = spm.SentencePieceProcessor(model_file=str(folder / "target.spm"))
    pieces = (processor.id_to_piece(i) for i in range(processor.get_piece_size()))
    return sorted({vocab[p] for p in pieces if p in vocab} | {vocab["</s>"]})


def realistic_model(workload: list[str]) -> Path:
    """Build (once, cached) and return the realistic model's folder."""
    folder = CACHE_DIR / "opus-mt-zh-en-realistic"
    if (folder / "lengths.json").exists():
        return folder
    import torch
    from transformers import AutoTokenizer, MarianMTModel

    from worker.model.offline_model import make_test_model

    log.info("building the realistic opus-mt-zh-en-shaped model in %s (once, a few minutes)", folder)
    make_test_model(folder, shape="opus", zh_lines=workload, behaviour="random", target_words=32000)
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = MarianMTModel.from_pretrained(str(folder)).eval()
    eos = model.generation_config.eos_token_id
    with torch.no_grad():
        bias = torch.full_like(model.final_logits_bias[0], OUTSIDE_TARGET_BIAS)
        bias[target_ids(folder)] = 0.0
        model.final_logits_bias[0].copy_(bias)
    margins = end_margins(model, tokenizer, workload)
    source = [len(ids) for ids in tokenizer(workload, add_special_tokens=False)["input_ids"]]
    wanted = LENGTH_RATIO * statistics.mean(source)
    low, high = -50.0, 50.0
    for _ in range(60):
        mid = (low + high) / 2
        if statistics.mean(lengths_at(margins, mid)) > wanted:
            low = mid
        else:
            high = mid
    with torch.no_grad():
        model.final_logits_bias[0, eos] += high
    model.save_pretrained(str(folder))
    lengths = lengths_at(margins, high)
    (folder / "lengths.json").write_text(
        json.dumps({"eos_bias": high, "source": source, "greedy_fp32": lengths}), encoding="utf-8"
    )
    log.info("end bias %.3f: %s", high, describe_lengths(lengths, source))
    return folder


def end_margins(model, tokenizer, sentences: list[str]) -> list[list[float]]:  # type: ignore[no-untyped-def]
    """Per sentence and step of a greedy pass with the end token banned: best other logit - end logit.
    The steps are the engine's (worker.model.fused_decoder: the same logits as generate()'s, faster)."""
    import torch

    from worker.model.fused_decoder import FusedSteps

    config = model.generation_config
    eos, pad = config.eos_token_id, config.pad_token_id
    rows = []
    for start in range(0, len(sentences), 16):
        inputs = tokenizer(sentences[start : start + 16], return_tensors="pt", padding=True)
        with torch.inference_mode():
            hidden = model.get_encoder()(**inputs).last_hidden_state
            step = FusedSteps(model, hidden, inputs["attention_mask"], MAX_NEW_TOKENS)
            tokens, margins = torch.full((len(hidden), 1), pad), []
            for _ in range(MAX_NEW_TOKENS):
                logits = step(tokens)
                end = logits[:, eos].clone()
                logits[:, [eos, pad]] = -torch.inf
                best = logits.max(dim=-1)
                margins.append(best.values - end)
                tokens = best.indices[:, None]
        rows += torch.stack(margins, dim=1).tolist()
    return rows


def lengths_at(margins: list[list[float]], bias: float) -> list[int]:
    """Output lengths (end token included) with this end-token bias; MAX_NEW_TOKENS where none ends."""
    return [next((i + 1 for i, m in enumerate(row) if m < bias), MAX_NEW_TOKENS) for row in margins]


def describe_lengths(lengths: list[int], source: list[int]) -> str:
    """Mean, spread and ratio to the source of output lengths, in one line."""
    q = statistics.quantiles(lengths, n=10) if len(lengths) > 1 else [lengths[0]] * 9
    ratio = statistics.mean(lengths) / statistics.mean(source)
    return (
        f"output tokens mean {statistics.mean(lengths):.1f} (x{ratio:.2f} source), sd {statistics.pstdev(lengths):.1f},"
        f" min {min(lengths)}, p10 {q[0]:.0f}, p50 {q[4]:.0f}, p90 {q[8]:.0f}, max {max(lengths)};"
        f" at the {MAX_NEW_TOKENS}-token cap: {sum(n >= MAX_NEW_TOKENS for n in lengths)}"
    )

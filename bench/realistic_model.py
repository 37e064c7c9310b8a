"""The realistic benchmark model: opus-mt-zh-en's exact shape, random weights, outputs ending at varied lengths.

Every other benchmark forces its outputs to exactly N tokens, so all rows of a batch end together. Real
translations end at different steps, longer sources giving longer outputs. This model is built so they
do, offline and deterministically, in its weights only (transformers, transq and CTranslate2 compute the
same thing from the saved files):

1. `make_test_model(shape="opus", target_words=32000)`: opus-mt-zh-en's shape (6+6 layers, d_model 512,
   a joint vocabulary of 65,001) with a target.spm of about 32,300 pieces, as opus-mt's target side has
   about half of the joint vocabulary.
2. A trained Marian decoder puts no weight on pieces outside its target vocabulary: `final_logits_bias`
   is -30 on those columns (exp(-30) x 33,000 columns is below float32's resolution of a log-partition).
3. The end token's embedding row is fitted (the output layer is the tied embedding table, so that row
   is the end logit's weights). A constant end bias alone gives bimodal lengths: a random model's greedy
   chain falls into a loop where the end token's margin (best other logit - end logit) is nearly
   constant, so a sentence ends at its first step or never (the first version: median 1 token, 14 of 64
   at the 128-token cap). Instead, one greedy pass with the end token banned records the decoder's
   states h and the best other logit at every step t, and the row is the ridge regression of
   best + SLOPE x (t + 1 - 1.2 x source tokens) on h: the decoder's states carry both their position
   (the sinusoidal position embeddings survive the 6 post-norm layers: a direction along a few of
   their low-frequency dims correlates 0.98 with the step) and the source's length (in the fitting pass, a row fitted on
   half the sentences gives the other half lengths correlated 0.99 with their sources), so the margin then falls by about
   SLOPE a step and crosses zero near 1.2x the source, give or take the random layers' noise.
4. The tied row is also the encoder's `</s>` input, so the fitted row changes the encoder's outputs and
   the greedy chains: a second banned pass, on the model with its new row, records the margins
   exactly. With end bias b a sentence ends at the first step whose margin is below b, and the steps
   before are unchanged (the bias touches the end column only), so that pass gives the output lengths
   for every b; b is bisected so that the mean output is 1.2x the mean source length (in tokens). The
   lengths are written to `lengths.json` and printed by bench.engines.

Measured (fp32 greedy, the 64 sentences of bench/data/zh_sentences.txt, source mean 24.3 tokens):
output tokens mean 29.2 (x1.20 source), sd 12.0, min 17, p10 18, p50 24, p90 50, max 62; at the
128-token cap: 0. Pearson correlation of source and output lengths 0.99; transformers' generate() gives
the same 64 lengths. SLOPE is steep so that the end token stays improbable until near its step, as in a
trained model: with 0.1 (the same greedy lengths) beam search was ill-defined, every step's end being
nearly as likely as the best token (beam 4, 16 sentences: generate() 43.6 tokens, CTranslate2 15.2;
with 0.4: 35.9 and 28.2). CTranslate2 converts the same model (float32: the same lengths, 64 of 64 with
SLOPE 0.1), but its int8 ends sentences about 4 tokens earlier on this machine (greedy mean 25.5; AVX2,
no VNNI): its int8 activations move the decoder's states, and the end logit, a fitted sum over all 512
dims, follows them; the weights' quantization alone (int8 weights, float32 compute, SLOPE 0.1) moved
0.3 tokens.

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
SLOPE = 0.4  # logits a step by which the end token's margin falls around the wanted length (0.1: beam 4 ill-defined)
RIDGE = 1000.0  # the end row's regression penalty (a row of norm ~5; the other rows ~0.45)


def target_ids(folder: Path) -> list[int]:
    """The joint vocabulary's ids of the target.spm pieces, and the end token."""
    import sentencepiece as spm

    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    processor = spm.SentencePieceProcessor(model_file=str(folder / "target.spm"))
    pieces = (processor.id_to_piece(i) for i in range(processor.get_piece_size()))
    return sorted({vocab[p] for p in pieces if p in vocab} | {vocab["</s>"]})


def realistic_model(workload: list[str]) -> Path:
    """Build (once, cached) and return the realistic model's folder."""
    folder = CACHE_DIR / "opus-mt-zh-en-realistic-v2"
    if (folder / "lengths.json").exists():
        return folder
    import torch
    from transformers import AutoTokenizer, MarianMTModel

    from worker.translation.model.offline_model import make_test_model

    log.info("building the realistic opus-mt-zh-en-shaped model in %s (once, 5-15 minutes)", folder)
    make_test_model(folder, shape="opus", zh_lines=workload, behaviour="random", target_words=32000)
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = MarianMTModel.from_pretrained(str(folder)).eval()
    eos = model.generation_config.eos_token_id
    with torch.no_grad():
        bias = torch.full_like(model.final_logits_bias[0], OUTSIDE_TARGET_BIAS)
        bias[target_ids(folder)] = 0.0
        model.final_logits_bias[0].copy_(bias)
    source = [len(ids) for ids in tokenizer(workload, add_special_tokens=False)["input_ids"]]
    tokens, margins = banned_pass(model, tokenizer, workload)
    states = decoder_states(model, tokenizer, workload, tokens)
    end_logits = states @ model.get_output_embeddings().weight[eos].detach() + model.final_logits_bias[0, eos]
    row = end_row(states, margins + end_logits, source)
    with torch.no_grad():  # the tied matrix: the end token's output row, and its input embedding
        model.get_input_embeddings().weight[eos].copy_(row)
    margins = banned_pass(model, tokenizer, workload)[1].tolist()  # the new row changed the encoder too
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


def end_row(states, best, source: list[int]):  # type: ignore[no-untyped-def]
    """The end token's embedding row whose logit h . row tracks, at step t (0-based) of a sentence of
    `source` tokens, best + SLOPE x (t + 1 - LENGTH_RATIO x source): ridge regression over every
    sentence and step of the banned pass (`states`: decoder outputs, `best`: best other logits)."""
    import torch

    steps = torch.arange(1, states.shape[1] + 1, dtype=states.dtype)
    wanted = torch.tensor(source, dtype=states.dtype)[:, None] * LENGTH_RATIO
    target = (best + SLOPE * (steps[None, :] - wanted)).reshape(-1)
    x = states.reshape(-1, states.shape[-1])
    gram = x.T @ x + RIDGE * torch.eye(x.shape[1], dtype=x.dtype)
    return torch.linalg.solve(gram, x.T @ target)


def banned_pass(model, tokenizer, sentences: list[str]):  # type: ignore[no-untyped-def]
    """A greedy pass with the end token banned, MAX_NEW_TOKENS steps: the tokens chosen, and per sentence
    and step the end token's margin (best other logit - end logit). The steps are the engine's
    (worker.translation.model.fused_decoder: the same logits as generate()'s, faster)."""
    import torch

    from worker.translation.model.fused_decoder import FusedSteps

    config = model.generation_config
    eos, pad = config.eos_token_id, config.pad_token_id
    chosen, rows = [], []
    for start in range(0, len(sentences), 16):
        inputs = tokenizer(sentences[start : start + 16], return_tensors="pt", padding=True)
        with torch.inference_mode():
            hidden = model.get_encoder()(**inputs).last_hidden_state
            step = FusedSteps(model, hidden, inputs["attention_mask"], MAX_NEW_TOKENS)
            tokens, picked, margins = torch.full((len(hidden), 1), pad), [], []
            for _ in range(MAX_NEW_TOKENS):
                logits = step(tokens)
                end = logits[:, eos].clone()
                logits[:, [eos, pad]] = -torch.inf
                best = logits.max(dim=-1)
                margins.append(best.values - end)
                tokens = best.indices[:, None]
                picked.append(best.indices)
        chosen.append(torch.stack(picked, dim=1))
        rows.append(torch.stack(margins, dim=1))
    return torch.cat(chosen), torch.cat(rows)


def end_margins(model, tokenizer, sentences: list[str]) -> list[list[float]]:  # type: ignore[no-untyped-def]
    """Per sentence and step of a greedy pass with the end token banned: best other logit - end logit."""
    return banned_pass(model, tokenizer, sentences)[1].tolist()


def decoder_states(model, tokenizer, sentences: list[str], tokens):  # type: ignore[no-untyped-def]
    """The decoder's outputs (what the tied output matrix multiplies) at every step of `tokens`, in one
    teacher-forced pass of transformers' decoder: [sentences, steps, d_model]."""
    import torch

    pad = model.generation_config.pad_token_id
    states = []
    for start in range(0, len(sentences), 16):
        inputs = tokenizer(sentences[start : start + 16], return_tensors="pt", padding=True)
        rows = tokens[start : start + 16]
        fed = torch.cat([torch.full((len(rows), 1), pad), rows[:, :-1]], dim=1)
        with torch.inference_mode():
            encoded = model.get_encoder()(**inputs).last_hidden_state
            out = model.get_decoder()(
                input_ids=fed, encoder_hidden_states=encoded, encoder_attention_mask=inputs["attention_mask"]
            )
        states.append(out.last_hidden_state)
    return torch.cat(states)


def lengths_at(margins: list[list[float]], bias: float) -> list[int]:
    """Output lengths (end token included) with this end-token bias; MAX_NEW_TOKENS where none ends."""
    return [next((i + 1 for i, m in enumerate(row) if m < bias), MAX_NEW_TOKENS) for row in margins]


def describe_lengths(lengths: list[int], source: list[int]) -> str:
    """Mean, spread and ratio to the source of output lengths, and their correlation with it, in one line."""
    q = statistics.quantiles(lengths, n=10) if len(lengths) > 1 else [lengths[0]] * 9
    ratio = statistics.mean(lengths) / statistics.mean(source)
    varied = len(lengths) == len(source) and len(set(lengths)) > 1 and len(set(source)) > 1
    correlation = f"; r(source, output) {statistics.correlation(source, lengths):.2f}" if varied else ""
    return (
        f"output tokens mean {statistics.mean(lengths):.1f} (x{ratio:.2f} source), sd {statistics.pstdev(lengths):.1f},"
        f" min {min(lengths)}, p10 {q[0]:.0f}, p50 {q[4]:.0f}, p90 {q[8]:.0f}, max {max(lengths)};"
        f" at the {MAX_NEW_TOKENS}-token cap: {sum(n >= MAX_NEW_TOKENS for n in lengths)}{correlation}"
    )

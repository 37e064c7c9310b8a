"""Build a MarianMT model and real sentencepiece tokenizers, offline.

`from_pretrained(folder)` loads it exactly as it loads Helsinki-NLP/opus-mt-zh-en:
the same files (source.spm, target.spm, vocab.json with <pad> last, config.json,
generation_config.json, weights). Two shapes: `tiny` for tests and demos, `opus` for the
exact opus-mt-zh-en shape (77.9 M parameters, random weights) used by the benchmarks.

Random weights translate every input into the same long loop of pieces. So the tiny model is
taught, in a few seconds of training on its own corpus, to copy its input: its "translation" of
a sentence is that sentence, near enough, and ends where the sentence ends, so outputs are short
and tell sentences apart. `behaviour="random"` keeps the untrained, looping model (the test of
the degenerate-output guard uses it).
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Sequence

log = logging.getLogger(__name__)

DATA = Path(__file__).parent / "data"
SHAPES = {
    "tiny": dict(
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        vocab_size=0,
    ),
    "opus": dict(
        d_model=512,
        encoder_layers=6,
        decoder_layers=6,
        encoder_attention_heads=8,
        decoder_attention_heads=8,
        encoder_ffn_dim=2048,
        decoder_ffn_dim=2048,
        vocab_size=65001,
    ),
}


def _train_spm(
    lines: Sequence[str], prefix: Path, vocab_size: int, coverage: float, extra_pieces: Sequence[str] = ()
) -> None:
    import sentencepiece as spm

    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as handle:
        handle.write("\n".join(lines))
        corpus = handle.name
    spm.SentencePieceTrainer.train(
        input=corpus,
        model_prefix=str(prefix),
        vocab_size=vocab_size + len(extra_pieces),
        user_defined_symbols=list(extra_pieces),
        character_coverage=coverage,
        model_type="unigram",
        hard_vocab_limit=False,
        bos_id=-1,
        eos_id=0,
        unk_id=1,
        pad_id=-1,
        minloglevel=2,
        num_threads=1,
    )
    Path(corpus).unlink()


def _pieces(model_file: Path) -> list[str]:
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_file=str(model_file))
    return [processor.id_to_piece(i) for i in range(processor.get_piece_size())]


def make_test_model(
    folder: str | Path,
    shape: str = "tiny",
    zh_lines: Sequence[str] | None = None,
    num_beams: int = 1,
    seed: int = 0,
    pair: str = "zh-en",
    behaviour: str = "copy",
    target_words: int = 0,
) -> Path:
    """Write a MarianMT model of `shape` translating `pair` (zh-en or en-zh) into `folder`; return it.
    `behaviour`: "copy" (the tiny shape only: taught to copy its input) or "random" (untrained).
    `target_words`: that many extra whole-word pieces in target.spm (a target vocabulary of opus-mt's size)."""
    import torch
    from transformers import MarianConfig, MarianMTModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no tqdm bar while the weights are written
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    corpora = {
        "zh": (list(zh_lines or []) + (DATA / "corpus.zh.txt").read_text(encoding="utf-8").splitlines(), 0.9995),
        "en": ((DATA / "corpus.en.txt").read_text(encoding="utf-8").splitlines(), 1.0),
    }
    source, _, target = pair.partition("-")
    if source not in corpora or target not in corpora or source == target:
        raise ValueError(f"the offline test model translates zh-en or en-zh, not {pair!r}")
    small = shape == "tiny"
    sizes = {"zh": 400 if small else 4000, "en": 300 if small else 1000}
    _train_spm(corpora[source][0], folder / "source", sizes[source], corpora[source][1])
    words = [f"w{n}q" for n in range(target_words)]
    _train_spm(corpora[target][0], folder / "target", sizes[target], corpora[target][1], words)
    (folder / "source.model").rename(folder / "source.spm")
    (folder / "target.model").rename(folder / "target.spm")
    for extra in ("source.vocab", "target.vocab"):
        (folder / extra).unlink(missing_ok=True)

    # One joint vocabulary as in opus-mt: </s> 0, <unk> 1, the pieces, <pad> last.
    vocab: dict[str, int] = {"</s>": 0, "<unk>": 1}
    for piece in _pieces(folder / "source.spm") + _pieces(folder / "target.spm"):
        vocab.setdefault(piece, len(vocab))
    dims = dict(SHAPES[shape])
    size = dims.pop("vocab_size") or len(vocab) + 1
    filler = 0
    while len(vocab) < size - 1:
        vocab.setdefault(f"▁filler{filler}", len(vocab))
        filler += 1
    pad = len(vocab)
    vocab["<pad>"] = pad
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "MarianTokenizer",
                "source_lang": source,
                "target_lang": target,
                "model_max_length": 512,
                "separate_vocabs": False,
                "unk_token": "<unk>",
                "eos_token": "</s>",
                "pad_token": "<pad>",
            }
        ),
        encoding="utf-8",
    )

    config = MarianConfig(
        vocab_size=pad + 1,
        decoder_vocab_size=pad + 1,
        pad_token_id=pad,
        decoder_start_token_id=pad,
        eos_token_id=0,
        forced_eos_token_id=0,
        max_position_embeddings=512,
        scale_embedding=True,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
        activation_function="swish",
        **dims,
    )
    torch.manual_seed(seed)
    model = MarianMTModel(config)
    model.generation_config = opus_generation_config(pad, num_beams)
    if behaviour == "copy" and small:
        _teach_to_copy(model, folder, corpora[source][0] + corpora[target][0], seed)
    model.save_pretrained(folder)
    log.info(
        "test model (%s, %s, %d parameters, vocabulary %d) written to %s",
        shape,
        behaviour if small else "random",
        sum(p.numel() for p in model.parameters()),
        pad + 1,
        folder,
    )
    return folder


def opus_generation_config(pad: int, num_beams: int):  # type: ignore[no-untyped-def]
    """The generation config of Helsinki-NLP's opus-mt models, field for field (their generation_config.json:
    bad words, bos, decoder start, eos, forced eos, max_length, num_beams, pad, renormalize_logits)."""
    from transformers import GenerationConfig

    return GenerationConfig(
        bad_words_ids=[[pad]],
        bos_token_id=0,
        decoder_start_token_id=pad,
        eos_token_id=0,
        forced_eos_token_id=0,
        max_length=512,
        num_beams=num_beams,
        pad_token_id=pad,
        renormalize_logits=True,
    )


def _teach_to_copy(model, folder: Path, lines: Sequence[str], seed: int, steps: int = 700) -> None:  # type: ignore[no-untyped-def]
    """Train the model to give back its input: pieces of the corpus lines and random piece strings,
    up to 24 pieces, each followed by the end token (so it learns where to stop)."""
    import random

    import torch
    from transformers import MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(str(folder))
    encoded = [tokenizer(line, add_special_tokens=False)["input_ids"] for line in lines if line.strip()]
    pieces = [piece for ids in encoded for piece in ids]
    rng = random.Random(seed)
    torch.manual_seed(seed)

    def example() -> list[int]:
        length = rng.randint(1, 24)
        if rng.random() < 0.5:
            ids = rng.choice(encoded)
            start = rng.randint(0, max(0, len(ids) - length))
            return ids[start : start + length]
        return [rng.choice(pieces) for _ in range(length)]

    pad, eos, rows = model.config.pad_token_id, model.config.eos_token_id, 64
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        batch = [example() + [eos] for _ in range(rows)]
        width = max(len(ids) for ids in batch)
        inputs = torch.full((rows, width), pad)
        labels = torch.full((rows, width), -100)
        mask = torch.zeros((rows, width), dtype=torch.long)
        for row, ids in enumerate(batch):
            inputs[row, : len(ids)] = labels[row, : len(ids)] = torch.tensor(ids)
            mask[row, : len(ids)] = 1
        loss = model(input_ids=inputs, attention_mask=mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    log.info("taught the test model to copy its input (final loss %.2f)", loss.item())


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Build a small random MarianMT model offline.")
    parser.add_argument("folder")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    parser.add_argument("--pair", choices=["zh-en", "en-zh"], default="zh-en")
    parser.add_argument(
        "--behaviour", choices=["copy", "random"], default="copy", help="tiny shape: taught to copy, or untrained"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    make_test_model(args.folder, shape=args.shape, pair=args.pair, behaviour=args.behaviour)


if __name__ == "__main__":
    main()

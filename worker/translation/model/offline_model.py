"""Build a MarianMT model and real sentencepiece tokenizers, offline.

`from_pretrained(folder)` loads it exactly as it loads Helsinki-NLP/opus-mt-zh-en:
the same files (source.spm, target.spm, vocab.json with <pad> last, config.json,
generation_config.json, weights). Two shapes: `tiny` for tests and demos, `opus` for the
exact opus-mt-zh-en shape (77.9 M parameters, random weights) used by the benchmarks.

Random weights translate every input into the same long loop of pieces. So the tiny model copies its
input: its "translation" of any text is that text, character for character (its weights are constructed,
not trained: worker.translation.model.copy_construction; its tokenizer falls back to bytes, so every
character, emoji included, has pieces). Outputs are short, tell sentences apart and show real
per-sentence output. It ships with the package in worker/translation/model/data/copy-model (zh-en;
en-zh is the same model with its pair swapped: it copies either language) and `make_test_model` copies
those files; `build=True` (`--build`, a second or two) constructs them again
(`python -m worker.translation.model.offline_model worker/translation/model/data/copy-model --build`).
`behaviour="random"` keeps the untrained, looping model (the test of the degenerate-output guard uses it).
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

from worker.translation.model.model_shapes import SHAPES

log = logging.getLogger(__name__)

DATA = Path(__file__).parent / "data"
COPY_MODEL = DATA / "copy-model"  # the copy model, built by `make_test_model(COPY_MODEL, build=True)`
COPY_VOCABULARY = 1500  # one sentencepiece model for both sides: every character of the corpora, pieces,
BYTES = 256  # and a piece per byte, for every other character (byte fallback)


def train_spm(
    lines: Sequence[str],
    prefix: Path,
    vocab_size: int,
    coverage: float,
    exact: bool = False,
    extra_pieces: Sequence[str] = (),
) -> None:
    """`exact`: no normalisation (text comes back as it went in, full-width punctuation and runs of spaces
    included) and byte pieces for any character outside the vocabulary; `extra_pieces`: whole pieces added
    to the vocabulary."""
    import sentencepiece as spm

    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as handle:
        handle.write("\n".join(lines))
        corpus = handle.name
    spm.SentencePieceTrainer.train(
        input=corpus,
        model_prefix=str(prefix),
        vocab_size=vocab_size + len(extra_pieces) + (BYTES if exact else 0),
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
        normalization_rule_name="identity" if exact else "nmt_nfkc",
        remove_extra_whitespaces=not exact,
        byte_fallback=exact,
    )
    Path(corpus).unlink()


def spm_pieces(model_file: Path) -> list[str]:
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
    build: bool = False,
    target_words: int = 0,
) -> Path:
    """Write a MarianMT model of `shape` translating `pair` (zh-en or en-zh) into `folder`; return it.
    `behaviour`: "copy" (the tiny shape only: copies its input; the shipped copy model unless `build` or
    `zh_lines` ask for a new one) or "random" (untrained). `target_words`: that many extra
    whole-word pieces in target.spm (a target vocabulary of opus-mt's size)."""
    folder = Path(folder)
    source, _, target = pair.partition("-")
    if {source, target} != {"zh", "en"}:
        raise ValueError(f"the offline test model translates zh-en or en-zh, not {pair!r}")
    copies = behaviour == "copy" and shape == "tiny"
    if copies and not build and not zh_lines:
        return _shipped_copy_model(folder, source, target, num_beams)
    import torch
    from transformers import MarianConfig, MarianMTModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no tqdm bar while the weights are written
    folder.mkdir(parents=True, exist_ok=True)
    corpora = {
        "zh": (list(zh_lines or []) + (DATA / "corpus.zh.txt").read_text(encoding="utf-8").splitlines(), 0.9995),
        "en": ((DATA / "corpus.en.txt").read_text(encoding="utf-8").splitlines(), 1.0),
    }
    small = shape == "tiny"
    everything = copy_corpus(corpora["zh"][0])
    if copies:  # one sentencepiece model on both sides, every character of every corpus in it, no normalisation
        train_spm(everything, folder / "source", COPY_VOCABULARY, 1.0, exact=True)
        shutil.copyfile(folder / "source.model", folder / "target.model")
    else:
        sizes = {"zh": 400 if small else 4000, "en": 300 if small else 1000}
        words = [f"w{n}q" for n in range(target_words)]
        train_spm(corpora[source][0], folder / "source", sizes[source], corpora[source][1])
        train_spm(corpora[target][0], folder / "target", sizes[target], corpora[target][1], extra_pieces=words)
    (folder / "source.model").rename(folder / "source.spm")
    (folder / "target.model").rename(folder / "target.spm")
    for extra in ("source.vocab", "target.vocab"):
        (folder / extra).unlink(missing_ok=True)

    # One joint vocabulary as in opus-mt: </s> 0, <unk> 1, the pieces, <pad> last.
    vocab: dict[str, int] = {"</s>": 0, "<unk>": 1}
    for piece in spm_pieces(folder / "source.spm") + spm_pieces(folder / "target.spm"):
        vocab.setdefault(piece, len(vocab))
    dims = dict(SHAPES["copy" if copies else shape])
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
    if copies:
        from worker.translation.model.copy_construction import construct_copy_model

        construct_copy_model(model)
    model.save_pretrained(folder)
    _readable(folder)
    log.info(
        "test model (%s, %s, %d parameters, vocabulary %d) written to %s",
        shape,
        behaviour if small else "random",
        sum(p.numel() for p in model.parameters()),
        pad + 1,
        folder,
    )
    return folder


def copy_corpus(zh: Sequence[str]) -> list[str]:
    """What the copy model's tokenizer reads: the Chinese sentences of the tests, then `zh` (its small
    corpus) and the English corpus."""
    english = (DATA / "corpus.en.txt").read_text(encoding="utf-8").splitlines()
    return _lines(DATA / "zh_sentences.txt") + list(zh) + english


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


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _readable(folder: Path) -> None:
    """Files any user may read (a container's user too: save_pretrained may write 0600)."""
    folder.chmod(0o755)
    for file in folder.iterdir():
        if file.is_file():
            file.chmod(0o644)


def _shipped_copy_model(folder: Path, source: str, target: str, num_beams: int) -> Path:
    """The copy model that ships with the package, for `source`-`target` (it copies either language)."""
    folder.mkdir(parents=True, exist_ok=True)
    for file in COPY_MODEL.iterdir():
        if file.is_file():
            shutil.copyfile(file, folder / file.name)
    tokenizer = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    tokenizer.update(source_lang=source, target_lang=target)
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    if num_beams != 1:
        generation = json.loads((folder / "generation_config.json").read_text(encoding="utf-8"))
        generation["num_beams"] = num_beams
        (folder / "generation_config.json").write_text(json.dumps(generation, indent=2), encoding="utf-8")
    _readable(folder)
    log.info("test model (copy, %s-%s) written to %s", source, target, folder)
    return folder


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Build a small random MarianMT model offline.")
    parser.add_argument("folder")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    parser.add_argument("--pair", choices=["zh-en", "en-zh"], default="zh-en")
    parser.add_argument(
        "--behaviour", choices=["copy", "random"], default="copy", help="tiny shape: copies its input, or untrained"
    )
    parser.add_argument(
        "--build",
        action="store_true",
        help="copy model: construct it again (seconds) instead of copying the shipped one",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    make_test_model(args.folder, shape=args.shape, pair=args.pair, behaviour=args.behaviour, build=args.build)


if __name__ == "__main__":
    main()

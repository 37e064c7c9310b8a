"""A Marian model folder's tokenizer read with sentencepiece alone: what transformers' MarianTokenizer does
for transq, without importing transformers (issue 37).

It reads source.spm, target.spm, vocab.json (target_vocab.json with `separate_vocabs`) and
tokenizer_config.json, and reproduces MarianTokenizer (transformers 5.x, tests/worker/translation/model/
test_marian_text.py compares them) where transq calls it:

- encoding as the engine asks, `add_special_tokens=False, split_special_tokens=True`: text that spells
  "</s>" or "<pad>" is text. A leading `>>xx<<` (the target-language code of multi-target models) is one
  token, looked up as a whole (unknown codes become <unk>), and the rest goes to source.spm; each piece is
  its vocab.json id, or <unk>'s. MarianTokenizer's Moses punctuation normaliser is built but never applied
  on this path; the only normalisation is source.spm's own, inside sentencepiece.
- decoding (`decode`, `batch_decode`, with `skip_special_tokens` and `clean_up_tokenization_spaces`):
  ids to tokens through the vocabulary (special tokens first), an id outside it through the spm's pieces;
  runs of pieces joined by sentencepiece, special tokens kept as written, "▁" as a space. As in
  MarianTokenizer, a shared vocabulary decodes with source.spm and separate vocabularies with target.spm.
- eos/pad/unk ids, `get_vocab()`, `spm_source`/`spm_target` (worker.translation.model.output_projection).

A folder it cannot reproduce (worker.translation.model.tokenizer_loading.unsupported says why) is left to
transformers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import sentencepiece

SPIECE_UNDERLINE = "▁"
DEFAULTS = {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}  # transformers' order
# transformers' clean_up_tokenization, in its order
CLEAN_UP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"))
CLEAN_UP += ((" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # not JSON, not UTF-8
        raise ValueError(f"{path.name} is not JSON: {exc}") from exc


def token_text(value: Any) -> str:
    """A special token as tokenizer_config.json writes it: a string, or an AddedToken's {"content": ...}."""
    return str(value["content"] if isinstance(value, dict) else value)


class MarianText:
    """The tokenizer of a Marian model folder (see the module's docstring); the MarianTokenizer calls transq
    makes, with their answers."""

    def __init__(self, folder: str | Path):
        folder = Path(folder)
        config_file = folder / "tokenizer_config.json"
        config = read_json(config_file) if config_file.is_file() else {}
        if not isinstance(config, dict):
            raise ValueError(f"{config_file} is not a JSON object")
        self.separate_vocabs = bool(config.get("separate_vocabs", False))
        self.encoder: dict[str, int] = read_json(folder / "vocab.json")
        if not isinstance(self.encoder, dict) or not all(type(i) is int for i in self.encoder.values()):
            raise ValueError(f"{folder / 'vocab.json'} is not a JSON object of pieces and their ids")
        specials = {name: token_text(config.get(name) or default) for name, default in DEFAULTS.items()}
        self.eos_token, self.unk_token, self.pad_token = (specials[n] for n in DEFAULTS)
        missing = [token for token in specials.values() if token not in self.encoder]
        if missing:
            raise ValueError(f"{folder / 'vocab.json'} lacks the special tokens {missing}")
        self.unk_token_id = self.encoder[self.unk_token]
        self.eos_token_id = self.encoder[self.eos_token]
        self.pad_token_id = self.encoder[self.pad_token]
        self.all_special_tokens = list(dict.fromkeys(specials.values()))
        self.all_special_ids = [self.encoder[token] for token in self.all_special_tokens]
        self._special_tokens = set(self.all_special_tokens)
        # MarianTokenizer's added tokens: the special tokens at their (source) vocabulary ids, read first
        self._added = {self.encoder[token]: token for token in self.all_special_tokens}
        if self.separate_vocabs:
            if not (folder / "target_vocab.json").is_file():
                raise ValueError(f"{folder} has separate vocabularies (tokenizer_config.json) but no target_vocab.json")
            target_vocab = read_json(folder / "target_vocab.json")
            if not isinstance(target_vocab, dict):
                raise ValueError(f"{folder / 'target_vocab.json'} is not a JSON object of pieces and their ids")
            self.decoder = {i: piece for piece, i in target_vocab.items()}
            self.supported_language_codes: list[str] = []
        else:
            self.decoder = {i: piece for piece, i in self.encoder.items()}
            self.supported_language_codes = [p for p in self.encoder if p.startswith(">>") and p.endswith("<<")]
        self.spm_source = _load_spm(folder / "source.spm")
        self.spm_target = _load_spm(folder / "target.spm")
        # decoding uses source.spm unless the vocabularies are separate (MarianTokenizer's use_source_tokenizer)
        self._decoding_spm = self.spm_target if self.separate_vocabs else self.spm_source
        self.clean_up_tokenization_spaces = bool(config.get("clean_up_tokenization_spaces", False))

    @property
    def vocab_size(self) -> int:
        return len(self.encoder)

    def get_vocab(self) -> dict[str, int]:
        """The source vocabulary, piece -> id (MarianTokenizer.get_vocab)."""
        return dict(self.encoder)

    def __call__(
        self, texts: Sequence[str], add_special_tokens: bool = True, split_special_tokens: bool = False
    ) -> dict[str, list[list[int]]]:
        """MarianTokenizer's `tokenizer(texts, add_special_tokens=..., split_special_tokens=True)["input_ids"]`
        for a list of texts, as {"input_ids": ...}. Text spelling a special token is always text here:
        split_special_tokens=False (a "</s>" in text read as the end token) is refused."""
        if not split_special_tokens:
            raise ValueError("MarianText reads special tokens in text as text: call it with split_special_tokens=True")
        if isinstance(texts, str):
            raise TypeError("MarianText encodes a list of texts")
        if not all(isinstance(text, str) for text in texts):
            raise ValueError("MarianText encodes texts (str) only")
        end = [self.eos_token_id] if add_special_tokens else []
        return {"input_ids": [self.encode(text) + end for text in texts]}

    def encode(self, text: str) -> list[int]:
        """One text's ids, no end token: a leading >>xx<< code as one token, the rest through source.spm."""
        ids: list[int] = []
        if text.startswith(">>") and (end := text.find("<<")) != -1:
            ids.append(self.encoder.get(text[: end + 2], self.unk_token_id))
            text = text[end + 2 :]
        encoder, unk = self.encoder, self.unk_token_id
        ids.extend(encoder.get(piece, unk) for piece in self.spm_source.encode(text, out_type=str))
        return ids

    def convert_ids_to_tokens(self, ids: Sequence[int], skip_special_tokens: bool = False) -> list[str]:
        skip = set(self.all_special_ids) if skip_special_tokens else set()
        tokens = []
        for index in ids:
            index = int(index)
            if index not in skip:
                tokens.append(self._added.get(index) or self._token(index))
        return tokens

    def _token(self, index: int) -> str:
        token = self.decoder.get(index)
        if token is None:  # outside the vocabulary: the decoding spm's piece (IndexError beyond it, as there)
            token = self._decoding_spm.IdToPiece(index) or self.unk_token
        return token

    def convert_tokens_to_string(self, tokens: Sequence[str]) -> str:
        spm, out, run = self._decoding_spm, "", []
        for token in tokens:
            if token in self._special_tokens:  # never through sentencepiece
                out += spm.decode_pieces(run) + token + " "
                run = []
            else:
                run.append(token)
        out += spm.decode_pieces(run)
        return out.replace(SPIECE_UNDERLINE, " ").strip()

    def decode(
        self, token_ids: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: bool | None = None
    ) -> Any:
        """The text of one sequence of ids (a list, a tensor's row, one id); a batch (a list of sequences, a 2-d
        tensor) gives a list of texts, as MarianTokenizer.decode."""
        ids = _plain(token_ids)
        if isinstance(ids, list) and ids and isinstance(ids[0], (list, tuple)):
            return [self._decode(row, skip_special_tokens, clean_up_tokenization_spaces) for row in ids]
        if isinstance(ids, int):  # one id is its token, special or not (MarianTokenizer skips none then)
            return self._decode([ids], False, clean_up_tokenization_spaces)
        return self._decode(ids, skip_special_tokens, clean_up_tokenization_spaces)

    def batch_decode(
        self, sequences: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: bool | None = None
    ) -> list[str]:
        """The text of each sequence (a list of id lists or 1-d tensors, or a 2-d tensor)."""
        rows = _plain(sequences)
        if not rows:
            return []
        if not isinstance(rows[0], (list, tuple)):  # one sequence: MarianTokenizer answers it as a batch of one
            rows = [rows]
        return [self._decode(row, skip_special_tokens, clean_up_tokenization_spaces) for row in rows]

    def _decode(self, ids: Sequence[int], skip_special_tokens: bool, clean_up: bool | None) -> str:
        text = self.convert_tokens_to_string(self.convert_ids_to_tokens(ids, skip_special_tokens))
        if self.clean_up_tokenization_spaces if clean_up is None else clean_up:
            for old, new in CLEAN_UP:
                text = text.replace(old, new)
        return text


def _load_spm(path: Path) -> sentencepiece.SentencePieceProcessor:
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.Load(str(path))
    except (OSError, RuntimeError) as exc:  # a missing file; "could not parse ModelProto"
        raise ValueError(f"{path} is not a sentencepiece model: {exc}") from exc
    return processor


def _plain(value: Any) -> Any:
    """A tensor or array, or a list of them (rows), as Python lists and ints, as transformers' to_py_obj."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [item.tolist() if hasattr(item, "tolist") else item for item in value]
    return value

"""The engine's tokenizer: worker.translation.model.marian_text for a Marian folder it reproduces exactly
(no transformers), else transformers' AutoTokenizer (another architecture, or a Marian folder with
settings MarianText does not reproduce: the log says which).

A hub name (Helsinki-NLP/opus-mt-zh-en) is looked up with huggingface_hub as AutoTokenizer does (the
tokenizer files only, from the local cache where the hub is unreachable or HF_HUB_OFFLINE is set); where
that fails, AutoTokenizer is asked, and its error is the one the engine reports.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from worker.translation.model.marian_text import DEFAULTS, MarianText, read_json, token_text

log = logging.getLogger(__name__)

MARIAN_FILES = ("source.spm", "target.spm", "vocab.json")
TOKENIZER_FILES = [*MARIAN_FILES, "target_vocab.json", "tokenizer_config.json", "config.json"]
TOKENIZER_FILES += ["special_tokens_map.json", "added_tokens.json", "tokenizer.json"]
# tokenizer_config.json keys that change nothing MarianText does (the engine's calls), besides DEFAULTS'
HARMLESS = {"source_lang", "target_lang", "model_max_length", "separate_vocabs", "clean_up_tokenization_spaces"}
HARMLESS |= {"tokenizer_class", "name_or_path", "padding_side", "truncation_side", "model_input_names"}
HARMLESS |= {"special_tokens_map_file", "target_vocab_file", "split_special_tokens", "do_lower_case", "backend"}
HARMLESS |= {"is_local", "local_files_only", "added_tokens_decoder"}  # the last checked on its own
EMPTY_ONLY = {"sp_model_kwargs", "additional_special_tokens", "extra_special_tokens"}


def load_tokenizer(model: str) -> Any:
    """MarianText where it reproduces the model's tokenizer, else AutoTokenizer.from_pretrained(model)."""
    folder = _local_folder(model)
    reason = unsupported(folder) if folder is not None else "no local copy of its tokenizer files"
    if reason is None:
        assert folder is not None
        return MarianText(folder)
    log.info("tokenizer of %s through transformers: %s", model, reason)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model)


def unsupported(folder: Path) -> str | None:
    """Why MarianText would not reproduce this folder's MarianTokenizer, or None where it does (ValueError:
    a Marian folder's JSON file that is no JSON object)."""
    missing = [name for name in MARIAN_FILES if not (folder / name).is_file()]
    if missing:
        return f"no {', '.join(missing)} (not a Marian tokenizer)"
    config = _json_object(folder / "tokenizer_config.json")  # ValueError where unreadable: a broken folder
    model = _json_object(folder / "config.json")
    specials = _json_object(folder / "special_tokens_map.json")
    named = config.get("tokenizer_class") or ("MarianTokenizer" if model.get("model_type") == "marian" else None)
    if named != "MarianTokenizer":
        return f"tokenizer class {named or 'unknown'}"
    for extra in ("added_tokens.json", "tokenizer.json"):
        if (folder / extra).is_file():
            return f"it has {extra}"
    unknown = sorted(k for k in config if k not in HARMLESS | EMPTY_ONLY | set(DEFAULTS))
    unknown += sorted(k for k in EMPTY_ONLY if config.get(k))
    if unknown:
        return f"tokenizer_config.json sets {', '.join(unknown)}"
    if any(name in config and not isinstance(config[name], (str, dict)) for name in DEFAULTS):
        return "tokenizer_config.json sets a special token to null"
    tokens = {name: token_text(config.get(name) or default) for name, default in DEFAULTS.items()}
    if "added_tokens_decoder" not in config and any(
        (value is None or token_text(value) != tokens[name]) if name in DEFAULTS else value
        for name, value in specials.items()
    ):
        return "special_tokens_map.json names other special tokens"
    return _added_tokens_problem(config, tokens, folder)


def _added_tokens_problem(config: dict, tokens: dict[str, str], folder: Path) -> str | None:
    """A saved added_tokens_decoder may only hold the special tokens at their vocabulary ids."""
    decoder = config.get("added_tokens_decoder") or {}
    if not decoder:
        return None
    vocab = _json_object(folder / "vocab.json")
    for index, token in decoder.items():
        content = token_text(token)
        if content not in tokens.values() or str(vocab.get(content)) != str(index):
            return f"added token {content!r} at {index}"
    return None


def _json_object(path: Path) -> dict:
    if not path.is_file():
        return {}
    value = read_json(path)
    if not isinstance(value, dict):
        raise ValueError(f"{path.name} is not a JSON object")
    return value


def _local_folder(model: str) -> Path | None:
    """The model's folder, or the local snapshot of a hub model's tokenizer files (None where there is none)."""
    folder = Path(model)
    if folder.is_dir():
        return folder
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model, allow_patterns=TOKENIZER_FILES))
    except Exception as exc:  # noqa: BLE001 - AutoTokenizer tries again and reports its own error
        log.debug("no tokenizer files of %s from the hub: %s", model, exc)
        return None

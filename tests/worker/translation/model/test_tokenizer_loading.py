"""Which tokenizer the engine loads: MarianText (no transformers) for a Marian folder or a hub model's cached
files, transformers' AutoTokenizer for anything MarianText does not reproduce, and a clear ModelLoadError for
broken tokenizer files."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shared.settings import Settings
from worker.translation.model.marian_text import MarianText
from worker.translation.model.offline_model import COPY_MODEL
from worker.translation.model.tokenizer_loading import load_tokenizer

ROOT = Path(__file__).resolve().parents[4]

# In a fresh interpreter: load, encode, decode; then say which heavy packages got imported.
LEAN_RUN = """
import sys
from worker.translation.model.tokenizer_loading import load_tokenizer
tokenizer = load_tokenizer(sys.argv[1])
ids = tokenizer(["今天天气很好。", "</s> >>en<< 😀"], add_special_tokens=False, split_special_tokens=True)["input_ids"]
texts = tokenizer.batch_decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=True)
print(type(tokenizer).__name__, texts[0], sorted(m for m in ("transformers", "torch") if m in sys.modules))
"""


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_marian_folder_is_tokenized_without_importing_transformers_or_torch():
    assert _run(LEAN_RUN, str(COPY_MODEL)) == "MarianText 今天天气很好。 []"


def test_a_hub_model_in_the_local_cache_is_tokenized_without_transformers(tmp_path):
    """A hub name resolves to its cached snapshot (HF_HUB_OFFLINE: the cache only, as a worker without the hub)."""
    snapshot = tmp_path / "hub" / "models--Helsinki-NLP--opus-mt-zh-en" / "snapshots" / ("0" * 40)
    shutil.copytree(COPY_MODEL, snapshot)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    env = {"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    assert _run(LEAN_RUN, "Helsinki-NLP/opus-mt-zh-en", env=env) == "MarianText 今天天气很好。 []"


def test_a_hub_model_neither_cached_nor_reachable_is_a_clear_load_error(tmp_path):
    code = (
        "import sys\nfrom shared.settings import Settings\n"
        "from worker.translation.model.engine import ModelLoadError, TranslationEngine\n"
        "try:\n    TranslationEngine(Settings(model=sys.argv[1]))\n"
        "except ModelLoadError as exc:\n    print('ModelLoadError', 'cannot load model' in str(exc))\n"
    )
    env = {"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    assert _run(code, "Helsinki-NLP/opus-mt-zh-en", env=env) == "ModelLoadError True"


def _marian_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "marian"
    shutil.copytree(COPY_MODEL, folder)
    return folder


def _config(folder: Path, **changes: object) -> None:
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, **changes}), encoding="utf-8")


ODD_SETTINGS = {
    "extra special tokens": (lambda f: _config(f, additional_special_tokens=["<eop>"]), "additional_special_tokens"),
    "subword sampling": (lambda f: _config(f, sp_model_kwargs={"enable_sampling": True}), "sp_model_kwargs"),
    "an unknown key": (lambda f: _config(f, add_prefix_space=True), "add_prefix_space"),
    "added tokens": (lambda f: (f / "added_tokens.json").write_text('{"<new>": 1757}'), "added_tokens.json"),
    "other specials": (
        lambda f: (f / "special_tokens_map.json").write_text('{"eos_token": "<unk>"}'),
        "special_tokens_map.json",
    ),
    "a null special token": (lambda f: _config(f, pad_token=None), "null"),
    "a null special token in the map": (
        lambda f: (f / "special_tokens_map.json").write_text('{"pad_token": null}'),
        "special_tokens_map.json",
    ),
    "an added token off its id": (
        lambda f: _config(f, added_tokens_decoder={"5": {"content": "</s>", "special": True}}),
        "added token",
    ),
}


@pytest.mark.parametrize("odd", sorted(ODD_SETTINGS))
def test_settings_marian_text_does_not_reproduce_go_to_transformers_and_say_why(tmp_path, caplog, odd):
    from transformers.models.marian.tokenization_marian import MarianTokenizer

    folder = _marian_copy(tmp_path)
    change, reason = ODD_SETTINGS[odd]
    change(folder)
    with caplog.at_level(logging.INFO, logger="worker.translation.model.tokenizer_loading"):
        tokenizer = load_tokenizer(str(folder))
    assert isinstance(tokenizer, MarianTokenizer)
    assert f"tokenizer of {folder} through transformers" in caplog.text and reason in caplog.text


def test_a_folder_of_another_architecture_gets_autotokenizer(tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n")
    (tmp_path / "tokenizer_config.json").write_text('{"tokenizer_class": "BertTokenizer"}')
    tokenizer = load_tokenizer(str(tmp_path))
    assert type(tokenizer).__name__ == "BertTokenizer"
    assert tokenizer(["hello world"], add_special_tokens=False, split_special_tokens=True)["input_ids"] == [[5, 6]]


def test_the_tests_models_and_a_folder_saved_by_transformers_get_marian_text(model_dir, split_model_dir, tmp_path):
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(str(split_model_dir)).save_pretrained(str(tmp_path))
    shutil.copyfile(split_model_dir / "config.json", tmp_path / "config.json")
    _config(tmp_path, tokenizer_class=None)  # the class from config.json's model_type, as AutoTokenizer finds it
    for folder in (COPY_MODEL, model_dir, split_model_dir, tmp_path):
        assert isinstance(load_tokenizer(str(folder)), MarianText), folder


def _unk_removed(folder: Path) -> None:
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    del vocab["<unk>"]
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")


BROKEN = {
    "source.spm is no sentencepiece model": (
        lambda f: (f / "source.spm").write_bytes(b"\x00garbage" * 64),
        "source.spm",
    ),
    "target.spm is empty": (lambda f: (f / "target.spm").write_bytes(b""), "target.spm"),
    "vocab.json is not JSON": (lambda f: (f / "vocab.json").write_text("{not json"), "vocab.json"),
    "vocab.json is a list": (lambda f: (f / "vocab.json").write_text("[1, 2]"), "vocab.json"),
    "vocab.json ids are not integers": (lambda f: (f / "vocab.json").write_text('{"<unk>": "1"}'), "vocab.json"),
    "vocab.json lacks <unk>": (_unk_removed, "<unk>"),
    "separate vocabularies without target_vocab.json": (lambda f: _config(f, separate_vocabs=True), "target_vocab"),
    "tokenizer_config.json is a list": (lambda f: (f / "tokenizer_config.json").write_text("[1]"), "tokenizer_config"),
    "tokenizer_config.json is not JSON": (lambda f: (f / "tokenizer_config.json").write_text("{"), "tokenizer_config"),
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_broken_tokenizer_files_are_a_clear_load_error(tmp_path, broken):
    """Before, transformers' KeyError or RuntimeError left the engine unreported as a load error."""
    from worker.translation.model.engine import ModelLoadError, TranslationEngine

    folder = _marian_copy(tmp_path)
    change, names = BROKEN[broken]
    change(folder)
    with pytest.raises(ModelLoadError, match="cannot load model") as error:
        TranslationEngine(Settings(model=str(folder)))
    assert names in str(error.value)

"""worker.translation.model.marian_text against transformers' MarianTokenizer (only tests import transformers):
the same ids for the benchmark and test workloads and for hostile text, the same texts for any ids, on the
shipped copy model, the tests' models and tokenizer folders of the other kinds MarianTokenizer reads
(separate vocabularies, multi-target language codes, a folder saved by transformers, clean-up on by default).
MARIAN_PARITY_FOLDERS (folders, os.pathsep between) adds others: bench/'s opus-shaped models, a real opus-mt."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

from worker.translation.model.marian_text import MarianText
from worker.translation.model.offline_model import COPY_MODEL, spm_pieces
from worker.translation.model.output_projection import target_token_ids

ROOT = Path(__file__).resolve().parents[4]
WORKLOAD_FILES = [
    ROOT / "bench" / "data" / "zh_sentences.txt",  # the benchmarks' workload (the realistic one's too)
    COPY_MODEL.parent / "zh_sentences.txt",
    COPY_MODEL.parent / "corpus.zh.txt",
    COPY_MODEL.parent / "corpus.en.txt",
    Path(__file__).parent / "data" / "english.txt",
]
HOSTILE = [
    "",
    " ",
    "   ",
    "\t\n \r\n",
    "😀",
    "👩🏽‍💻 family: 👨‍👩‍👧‍👦 flags 🇨🇳🇬🇧",
    "a\x00b",
    "\x00",
    "\x01\x02\x1b[31m\x7f\x85\x9f",
    "\u200b\u200d\ufeff\u2028\u2029",
    "</s>",
    "<unk>",
    "<pad>",
    "text </s> more <pad><unk></s>",
    ">>en<<",
    ">>en<< hello",
    ">>fra<<bonjour",
    ">>deu<< >>fra<< zwei",
    ">><<",
    ">>",
    "<<",
    "x >>en<< y",
    ">> en <<",
    ">>en",
    "▁",
    "▁▁x ▁ y▁",
    "北京 Beijing Пекин بكين 北京 ペキン 베이징 Ελλάδα עברית हिन्दी",
    "ｆｕｌｌ　ｗｉｄｔｈ，ＡＢＣ１２３！",
    "ﬁ ① ㎏ Å Ω ½ ™ x²",
    "e\u0301 n\u0303 \u0915\u094d\u0937",
    "“quoted” «guillemets» ‘single’ … — – ‐ ‹x› „low“ ´ ` ¨",
    "Mr . Smith , don 't ! isn 't it ? I 'm sure . We 're here . They 've gone . It 's ' fine ' .",
    "\ue000\uf8ff\U000f0000 private use, \ufffd replacement",
    "数字 12,345.67 和 3.14% 以及 1/2",
    "a" * 3000,
    "中文" * 2000 + " mixed " + "😀" * 500,
    " ".join(["word"] * 3000),
]


def workload() -> list[str]:
    return [line for path in WORKLOAD_FILES for line in path.read_text(encoding="utf-8").splitlines()]


def _marian_tokenizer(folder: Path):  # type: ignore[no-untyped-def]
    from transformers import AutoTokenizer
    from transformers.models.marian.tokenization_marian import MarianTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    assert isinstance(tokenizer, MarianTokenizer)
    return tokenizer


def _tokenizer_files(source: Path, into: Path) -> Path:
    into.mkdir()
    for name in ("source.spm", "target.spm", "vocab.json", "tokenizer_config.json", "config.json"):
        shutil.copyfile(source / name, into / name)
    return into


def _config(folder: Path, **changes: object) -> None:
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, **changes}), encoding="utf-8")


@pytest.fixture(scope="module")
def folders(model_dir, split_model_dir, tmp_path_factory) -> dict[str, Path]:
    """Every kind of Marian tokenizer folder the parity tests read."""
    tmp = tmp_path_factory.mktemp("marian-text")
    separate = _tokenizer_files(split_model_dir, tmp / "separate")  # a vocabulary per side, as opus-mt-tc's
    source = {"</s>": 0, "<unk>": 1}
    for piece in spm_pieces(separate / "source.spm"):
        source.setdefault(piece, len(source))
    source["<pad>"] = len(source)
    target = {"</s>": 0, "<unk>": 1, **{p: n + 2 for n, p in enumerate(spm_pieces(separate / "target.spm")[2:])}}
    target["<pad>"] = len(target)
    (separate / "vocab.json").write_text(json.dumps(source, ensure_ascii=False), encoding="utf-8")
    (separate / "target_vocab.json").write_text(json.dumps(target, ensure_ascii=False), encoding="utf-8")
    _config(separate, separate_vocabs=True)
    multi = _tokenizer_files(split_model_dir, tmp / "multi")  # a multi-target model's >>xx<< codes
    vocab = json.loads((multi / "vocab.json").read_text(encoding="utf-8"))
    for code in (">>fra<<", ">>deu<<", ">>en<<"):
        vocab[code] = len(vocab)
    (multi / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    saved = tmp / "saved"  # as transformers 5 saves it: an added_tokens_decoder, sp_model_kwargs {}
    _marian_tokenizer(split_model_dir).save_pretrained(str(saved))
    shutil.copyfile(split_model_dir / "config.json", saved / "config.json")
    clean = _tokenizer_files(model_dir, tmp / "clean")
    _config(clean, clean_up_tokenization_spaces=True)
    kinds = {"shipped": COPY_MODEL, "copy": model_dir, "split": split_model_dir, "separate": separate}
    return {**kinds, "multi": multi, "saved": saved, "clean": clean, **{f: Path(f) for f in EXTRA}}


EXTRA = [folder for folder in os.environ.get("MARIAN_PARITY_FOLDERS", "").split(os.pathsep) if folder]
KINDS = ["shipped", "copy", "split", "separate", "multi", "saved", "clean", *EXTRA]


@pytest.fixture(scope="module", params=KINDS)
def pair(request, folders):  # type: ignore[no-untyped-def]
    """(transformers' MarianTokenizer, MarianText) of one folder."""
    folder = folders[request.param]
    return _marian_tokenizer(folder), MarianText(folder)


def test_ids_are_transformers_ids_for_the_workloads_and_hostile_text(pair):
    reference, ours = pair
    texts = workload() + HOSTILE
    expected = reference(texts, add_special_tokens=False, split_special_tokens=True)["input_ids"]
    assert ours(texts, add_special_tokens=False, split_special_tokens=True)["input_ids"] == expected
    with_end = reference(HOSTILE, split_special_tokens=True)["input_ids"]
    assert ours(HOSTILE, split_special_tokens=True)["input_ids"] == with_end  # add_special_tokens: </s> appended
    assert any(reference.unk_token_id in ids for ids in expected[-len(HOSTILE) :])  # the hostile text reaches <unk>


def test_special_ids_vocabulary_and_target_side_are_transformers(pair):
    reference, ours = pair
    for name in ("eos_token_id", "pad_token_id", "unk_token_id", "all_special_ids", "all_special_tokens"):
        assert getattr(ours, name) == getattr(reference, name), name
    assert ours.get_vocab() == reference.get_vocab()
    assert ours.supported_language_codes == reference.supported_language_codes
    assert target_token_ids(ours) == target_token_ids(reference)


def _random_ids(reference, count: int, seed: int) -> list[list[int]]:  # type: ignore[no-untyped-def]
    """Sequences of any ids of the decoding side, the special ones often, up to 80 long."""
    size = len(reference.target_encoder if reference.separate_vocabs else reference.encoder)
    specials = [reference.eos_token_id, reference.pad_token_id, reference.unk_token_id]
    rng = random.Random(seed)
    pick = lambda: rng.choice(specials) if rng.random() < 0.15 else rng.randrange(size)  # noqa: E731
    return [[pick() for _ in range(rng.randrange(0, 80))] for _ in range(count)]


@pytest.mark.parametrize("skip", [True, False])
@pytest.mark.parametrize("clean_up", [True, False, None])
def test_any_ids_decode_to_transformers_text(pair, skip, clean_up):
    reference, ours = pair
    sequences = _random_ids(reference, 600, seed=7)
    kwargs = {"skip_special_tokens": skip, "clean_up_tokenization_spaces": clean_up}
    assert ours.batch_decode(sequences, **kwargs) == reference.batch_decode(sequences, **kwargs)


def test_encoded_text_decodes_to_transformers_text_as_the_engine_calls_it(pair):
    reference, ours = pair
    texts = workload() + HOSTILE
    ids = reference(texts, add_special_tokens=False, split_special_tokens=True)["input_ids"]
    kwargs = {"skip_special_tokens": True, "clean_up_tokenization_spaces": True}
    # (source ids of separate vocabularies are no target ids: there both fail alike)
    assert _outcome(ours.batch_decode, ids, **kwargs) == _outcome(reference.batch_decode, ids, **kwargs)
    assert [_outcome(ours.decode, i) for i in ids] == [_outcome(reference.decode, i) for i in ids]


def _outcome(call, *args, **kwargs):  # type: ignore[no-untyped-def]
    """What a call returns, or the type of what it raises."""
    try:
        return call(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        return type(exc)


def test_tensors_single_ids_and_empty_batches_decode_as_in_transformers(pair):
    import torch

    reference, ours = pair
    rows = _random_ids(reference, 8, seed=3)
    width = max(len(r) for r in rows)
    padded = torch.tensor([r + [reference.pad_token_id] * (width - len(r)) for r in rows])
    kwargs = {"skip_special_tokens": True, "clean_up_tokenization_spaces": True}
    assert ours.batch_decode(padded, **kwargs) == reference.batch_decode(padded, **kwargs)  # the engine's output
    tensors = [torch.tensor(r, dtype=torch.long) for r in rows]  # generate()'s rows (guarded_retry)
    assert ours.batch_decode(tensors, **kwargs) == reference.batch_decode(tensors, **kwargs)
    assert [ours.decode(t, **kwargs) for t in padded] == [reference.decode(t, **kwargs) for t in padded]
    for single in (reference.eos_token_id, reference.pad_token_id, reference.unk_token_id, 5, [], [[]]):
        assert ours.decode(single, skip_special_tokens=True) == reference.decode(single, skip_special_tokens=True)
    assert ours.batch_decode([]) == reference.batch_decode([]) == []


def test_ids_beyond_every_vocabulary_fail_as_in_transformers(pair):
    reference, ours = pair
    beyond = max(len(reference.encoder), reference.spm_source.get_piece_size()) + 10
    for ids in ([beyond], [-1]):
        with pytest.raises(IndexError):
            reference.decode(ids)
        with pytest.raises(IndexError):
            ours.decode(ids)


def test_lone_surrogates_fail_as_in_transformers(pair):
    """The API refuses them (tests/reliability/test_input.py, entry 15); were one to come through, the
    tokenizer fails as transformers' does, never with other ids."""
    reference, ours = pair
    for text in ("a\ud800b", "\udfff"):
        with pytest.raises(Exception) as expected:
            reference([text], add_special_tokens=False, split_special_tokens=True)
        with pytest.raises(type(expected.value)):
            ours([text], add_special_tokens=False, split_special_tokens=True)


def test_calls_it_does_not_reproduce_are_refused():
    ours = MarianText(COPY_MODEL)
    with pytest.raises(ValueError, match="split_special_tokens=True"):
        ours(["</s>"], add_special_tokens=False)
    with pytest.raises(TypeError):
        ours("one text", split_special_tokens=True)
    with pytest.raises(ValueError, match="str"):
        ours([None], split_special_tokens=True)  # type: ignore[list-item]

"""The offline test model: constructed to copy, it ships with the package and gives back any text exactly,
text it never saw included, through the worker's own engine (the benchmarks keep their forced-length,
random-weight opus-shaped model)."""

import json
import random
import stat
from pathlib import Path

import pytest

from shared.settings import Settings
from shared.text.splitter import sentences, split_text
from worker.translation.model.offline_model import (
    COPY_MODEL,
    COPY_VOCABULARY,
    copy_corpus,
    make_test_model,
    spm_pieces,
    train_spm,
)
from worker.translation.model.output_guard import problem


def corpus_zh() -> list[str]:
    return (COPY_MODEL.parent / "corpus.zh.txt").read_text(encoding="utf-8").splitlines()


def test_the_offline_model_gives_short_outputs_that_tell_sentences_apart(model_dir):
    from worker.translation.model.engine import TranslationEngine

    engine = TranslationEngine(Settings(model=str(model_dir), max_new_tokens=64))  # int8, as a worker runs it
    sentences = [
        "今天天气很好。",
        "谢谢你的帮助！",
        "缓存测试第一句。",
        "这是一个很长的句子，我们用它来测试翻译模型的输出。",
    ]
    out = engine.translate_ids(engine.token_ids(sentences))
    assert len(set(out)) == len(sentences), out  # every sentence its own output
    for sentence, translation in zip(sentences, out):
        assert translation and problem(sentence, translation) is None, translation  # no loop, not far too long
        assert len(translation) <= 2 * len(sentence) + 4, translation  # it stops about where the sentence ends


ZH_FILE = Path(__file__).resolve().parents[4] / "worker" / "translation" / "model" / "data" / "zh_sentences.txt"
ENGLISH = Path(__file__).parent / "data" / "english.txt"


def _sentences(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [s for line in lines for s in sentences(split_text(line))]


@pytest.fixture(scope="module")
def shipped_engine():
    from worker.translation.model.engine import TranslationEngine

    return TranslationEngine(Settings(model=str(COPY_MODEL)))  # the worker's defaults: int8, greedy, 256 tokens


def _copies(engine, found: list[str]) -> list[tuple[str, str]]:
    """(sentence, output) of each sentence the engine did not give back character for character."""
    wrong = []
    for start in range(0, len(found), 48):
        batch = found[start : start + 48]
        out = engine.translate_ids(engine.token_ids(batch))
        wrong += [(s, t) for s, t in zip(batch, out) if s != t]
    return wrong


@pytest.mark.timeout(900)  # some 200 sentences through the int8 engine: seconds on an idle machine
def test_the_shipped_model_copies_every_sentence_of_the_chinese_file_faithfully(shipped_engine):
    """Every sentence of the file (as the splitter gives them to the worker), character for character."""
    found = _sentences(ZH_FILE)
    assert len(found) > 150
    assert not _copies(shipped_engine, found)


@pytest.mark.timeout(900)
def test_the_shipped_model_copies_ordinary_english_exactly(shipped_engine):
    found = _sentences(ENGLISH)
    assert not _copies(shipped_engine, found)


NEVER_SEEN = [
    "世界",
    "你好，世界！",
    "年度报告",
    "两千万。",
    "{name}",
    "a@b.cn",
    "Write to ops-team+alerts@example.org before 09:30.",
    "https://example.com/a/b?c=1&d=%E4%B8%AD#top",
    "Order #A-1029: 3 × 19.99 = 59.97 USD.",
    "Dear {name}, your code is {code} and %s items wait in <b>{count}</b>.",
    "🙂 emoji 🎉 and 👩‍💻 here",
    "金额为￥1,234.56元，共计2025年12月3日。",
    "Ünïcödé façade, naïve coöperation — “quoted” ‘text’…",
    "日本語のテキストと한국어 문장과 Русский текст.",
    "ℵ𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ∑∫√∞ ≠ ≤ ≥",
    "混合 text 与 123 和 __1__ 占位符",
]


@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "overrides", [{}, {"num_beams": 4}, {"quantize": "none"}], ids=["int8-greedy", "int8-beam4", "float"]
)
def test_the_copy_model_copies_text_it_never_saw(overrides):
    """Chinese, English, digits, URLs, e-mail addresses, placeholders, emoji and other scripts, none in its
    corpora, come back character for character, in one padded batch, greedy or at beam 4, int8 or float."""
    from worker.translation.model.engine import TranslationEngine

    engine = TranslationEngine(Settings(model=str(COPY_MODEL), **overrides))
    ids = engine.token_ids(NEVER_SEEN)
    assert engine.tokenizer.unk_token_id not in {i for sentence in ids for i in sentence}  # byte fallback
    assert engine.translate_ids(ids) == NEVER_SEEN


@pytest.mark.timeout(900)
def test_the_copy_model_copies_random_text_up_to_the_longest_sentence(shipped_engine):
    """Random characters from many scripts, up to 250 pieces (TRANSQ_MAX_INPUT_TOKENS is 256)."""
    rng = random.Random(7)
    alphabet = [chr(c) for c in [*range(0x21, 0x7F), *range(0x4E00, 0x4E80), *range(0x3040, 0x3090), 0x1F600, 0x1F389]]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 90))) for _ in range(24)]
    longest = max(len(i) for i in shipped_engine.token_ids(texts))
    assert 120 < longest <= 256
    assert not _copies(shipped_engine, texts)


def test_every_character_of_the_chinese_file_is_in_the_vocabulary(shipped_engine):
    ids = shipped_engine.token_ids(_sentences(ZH_FILE))
    assert shipped_engine.tokenizer.unk_token_id not in {i for sentence in ids for i in sentence}


def test_the_shipped_model_is_what_a_rebuild_makes(tmp_path):
    """make-test-model --build constructs the copy model again (seconds): the shipped weights byte for byte,
    the shipped pieces in the shipped order (the .spm files also record the temporary corpus's path)."""
    train_spm(copy_corpus(corpus_zh()), tmp_path / "rebuilt", COPY_VOCABULARY, 1.0, exact=True)
    assert spm_pieces(tmp_path / "rebuilt.model") == spm_pieces(COPY_MODEL / "source.spm")
    assert (COPY_MODEL / "source.spm").read_bytes() == (COPY_MODEL / "target.spm").read_bytes()
    folder = make_test_model(tmp_path / "built", build=True)
    for name in ("model.safetensors", "vocab.json", "config.json", "generation_config.json"):
        assert (folder / name).read_bytes() == (COPY_MODEL / name).read_bytes(), name


@pytest.mark.parametrize("pair", ["zh-en", "en-zh"])
def test_make_test_model_writes_the_shipped_model_readable_by_anyone(tmp_path, pair):
    folder = make_test_model(tmp_path / pair, pair=pair)
    assert (folder / "model.safetensors").read_bytes() == (COPY_MODEL / "model.safetensors").read_bytes()
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert f"{config['source_lang']}-{config['target_lang']}" == pair
    assert {stat.S_IMODE(f.stat().st_mode) for f in folder.iterdir()} == {0o644}  # a container's user reads them


def test_a_trained_or_random_model_is_readable_by_anyone_too(tmp_path):
    folder = make_test_model(tmp_path / "random", behaviour="random")  # written by save_pretrained
    assert {stat.S_IMODE(f.stat().st_mode) for f in folder.iterdir()} == {0o644}

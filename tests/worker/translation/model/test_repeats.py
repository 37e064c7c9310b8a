"""What the degenerate-output guard calls a loop (worker/translation/model/repeats.py): what a reader would call one,
in Chinese, across words and inside one Latin word, on outputs the looping (random-weight) offline model
really produces; and never an ordinary sentence: every sentence of worker/translation/model/data/zh_sentences.txt (as the
offline copy model gives it back) and a page of ordinary English."""

from pathlib import Path

import pytest

from shared.settings import Settings
from shared.text.splitter import sentences, split_text
from worker.translation.model.output_guard import problem
from worker.translation.model.repeats import find_repeats, loop

DATA = Path(__file__).resolve().parents[4] / "worker" / "translation" / "model" / "data"
ENGLISH = Path(__file__).parent / "data" / "english.txt"


def zh_sentences() -> list[str]:
    text = (DATA / "zh_sentences.txt").read_text(encoding="utf-8")
    return [s for line in text.splitlines() for s in sentences(split_text(line))]


@pytest.mark.parametrize(
    "translation",
    [
        "处理处理处理",  # three repeats
        "我们明天去北京，处理处理处理。",  # three repeats inside a sentence
        "处理处理…崩崩崩…howhow",  # runs of different short repeats
        "howhowhow are you",  # glued inside one Latin word
        "the cat sat. the cat sat. the cat sat.",
        "。。。。。。。。",
        "I am sorry, I am sorry, I am sorry, I am sorry.",
        "a a a a a a",
    ],
)
def test_what_a_reader_calls_a_loop_is_one(translation):
    assert loop("今天天气很好。", translation) is not None
    assert problem("今天天气很好。", translation) is not None


@pytest.mark.parametrize(
    "source, translation",
    [
        ("哈哈哈，太好了。", "Hahaha, great."),  # the source laughs too
        ("哈哈哈哈哈哈", "哈哈哈哈哈哈"),  # a faithful copy
        ("谢谢！", "谢谢！"),
        ("你好。", "Hello."),
    ],
)
def test_a_repeat_its_source_has_is_no_loop(source, translation):
    assert loop(source, translation) is None


def test_no_sentence_of_the_chinese_file_reads_as_a_loop():
    found = zh_sentences()
    assert len(found) > 150
    for sentence in found:
        assert problem(sentence, sentence) is None, sentence  # the copy model's faithful copy
        assert loop("", sentence) is None, sentence  # as a translation of a source with no repeats
        assert loop("一句话。", sentence) is None, sentence


def test_no_ordinary_english_sentence_reads_as_a_loop():
    lines = [line for line in ENGLISH.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) >= 30
    for line in lines:
        assert loop("这是一句普通的中文。", line) is None, (line, find_repeats(line))


def test_what_the_looping_offline_model_produces_is_flagged(tmp_path):
    """The untrained offline model loops on every input (its real outputs, not made-up strings)."""
    from worker.translation.model.engine import TranslationEngine
    from worker.translation.model.offline_model import make_test_model

    folder = make_test_model(tmp_path / "random", behaviour="random")
    engine = TranslationEngine(Settings(model=str(folder), max_new_tokens=48))
    sources = zh_sentences()[:24]
    outputs = engine.translate_ids(engine.token_ids(sources))
    flagged = [problem(s, t) for s, t in zip(sources, outputs)]
    assert all(flagged), [(t, why) for t, why in zip(outputs, flagged) if not why]

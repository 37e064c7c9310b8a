"""The offline test model: taught to copy, its outputs are short and every sentence's own (the
benchmarks keep their forced-length, random-weight opus-shaped model)."""

from shared.settings import Settings
from worker.output_guard import problem


def test_the_offline_model_gives_short_outputs_that_tell_sentences_apart(model_dir):
    from worker.engine import TranslationEngine

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

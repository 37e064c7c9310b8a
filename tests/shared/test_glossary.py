"""Glossaries: validation and limits, digest, matching (longest first, word boundaries, case), placeholders
and their restoring, and the fallback, the last through the shipped copy model's tokenizer and int8 engine."""

from pathlib import Path

import pytest

from shared.settings import Settings
from shared.store.sentence_cache import glossary_namespace
from shared.text.glossary import Glossary, GlossaryError
from shared.text.term_protection import insert_terms, join_parts, protect, restore, translate_with_glossary
from worker.translation.model.offline_model import COPY_MODEL

ROOT = Path(__file__).resolve().parents[2]

SETTINGS = Settings(glossary_max_terms=5, glossary_max_term_chars=16)


def found(glossary: Glossary, sentence: str) -> list[str]:
    return [sentence[m.start : m.end] for m in glossary.matches(sentence)]


# Validation --------------------------------------------------------------------------------------


def test_a_glossary_is_normalised_and_its_digest_ignores_the_order_of_its_terms():
    one = Glossary.parse({"北京": "Beijing", " machine   learning ": "ML"}, SETTINGS)
    two = Glossary.parse({"machine learning": "ML", "北京": "Beijing"}, SETTINGS)
    assert one == two and one.digest == two.digest and len(one.digest) == 32
    assert one.as_dict() == {"machine learning": "ML", "北京": "Beijing"}
    assert Glossary.parse({"北京": "Peking"}, SETTINGS).digest != Glossary.parse({"北京": "Beijing"}, SETTINGS).digest


@pytest.mark.parametrize(
    "value, fragment",
    [
        (["北京"], "glossary must be an object"),
        ({f"t{i}": "x" for i in range(6)}, "6 terms; at most 5"),
        ({"北京": 3}, 'glossary["北京"] must be a string'),
        ({"北京": "  "}, 'glossary["北京"] is empty'),
        ({"  ": "x"}, "(the source term) is empty"),
        ({"北京": "B" * 17}, "17 characters; at most 16"),
        ({"a\x00b": "x"}, "control character"),
        ({"北京": "\ud800"}, "lone surrogate"),
        ({"a b": "x", "a  b": "y"}, "one term once normalised, different targets"),
    ],
)
def test_a_bad_glossary_is_refused_naming_the_field(value, fragment):
    with pytest.raises(GlossaryError, match=None) as caught:
        Glossary.parse(value, SETTINGS)
    assert fragment in str(caught.value)


def test_merging_adds_terms_and_the_second_glossary_wins():
    stored = Glossary.of({"北京": "Peking", "上海": "Shanghai"})
    assert stored.merged(Glossary.of({"北京": "Beijing"})).as_dict() == {"上海": "Shanghai", "北京": "Beijing"}
    assert stored.merged(None) is stored


# Matching ----------------------------------------------------------------------------------------


def test_the_longest_term_wins_and_matches_never_overlap():
    glossary = Glossary.of({"北京": "Beijing", "北京大学": "Peking University", "大学生": "students"})
    assert found(glossary, "北京大学生在北京。") == ["北京大学", "北京"]
    assert found(glossary, "我爱北京天安门") == ["北京"]


def test_latin_terms_match_only_at_word_boundaries_and_cjk_terms_anywhere():
    glossary = Glossary.of({"API": "API", "cat": "Katze", "C++": "C++", "服务": "service"})
    assert found(glossary, "The API is fine, APIs are not, nor is RAPID.") == ["API"]
    assert found(glossary, "调用API接口的服务器") == ["API", "服务"]  # no spaces in Chinese: no boundary needed
    assert found(glossary, "cat, cats, concat, cat_food, cat.") == ["cat", "cat"]
    assert found(glossary, "I write C++ daily") == ["C++"]
    assert found(Glossary.of({"café": "Café"}), "un café, des cafés") == ["café"]


def test_terms_are_literal_text():
    glossary = Glossary.of({".*": "ANY", "(a+)+$": "RE", "a": "b"})
    assert found(glossary, "x .* y (a+)+$ aaaa") == [".*", "(a+)+$"]


def test_case_counts_except_a_lower_case_term_at_the_start_of_a_sentence():
    glossary = Glossary.of({"cloud": "nube", "GitHub": "GitHub"})
    assert found(glossary, "Cloud first, the cloud later, no CLOUD.") == ["Cloud", "cloud"]
    assert found(glossary, "github is not GitHub") == ["GitHub"]


def test_only_sentences_a_term_matches_use_the_glossarys_cache_namespace():
    glossary = Glossary.of({"北京": "Beijing"})
    own = glossary_namespace("ns", glossary.digest)
    assert own not in ("ns", glossary_namespace("ns", Glossary.of({"北京": "Peking"}).digest))
    assert glossary.cache_namespaces("ns", ["我在北京。", "你好。"]) == [own, "ns"]


# Placeholders ------------------------------------------------------------------------------------


def test_protect_and_restore():
    glossary = Glossary.of({"北京": "Beijing", "上海": "Shanghai"})
    text, slots = protect(glossary, "从北京到上海。")
    assert text == "从__1__到__2__。" and [s.target for s in slots] == ["Beijing", "Shanghai"]
    assert restore("From __2__ to __ 1 __.", slots) == "From Shanghai to Beijing."
    assert protect(glossary, "你好。") == ("你好。", [])
    text, slots = protect(Glossary.of({"内存": "memory", "模型": "model", "大": "big"}), "大 模型内存很大")
    assert text == "__1__很__2__" and [s.target for s in slots] == ["big model memory", "big"]  # neighbours: one slot


@pytest.mark.parametrize("translation", ["From __1__ to.", "From __1__ __1__ to __2__.", "From __l__ to __2__."])
def test_a_placeholder_lost_repeated_or_mangled_is_no_restoring(translation):
    _, slots = protect(Glossary.of({"北京": "Beijing", "上海": "Shanghai"}), "从北京到上海。")
    assert restore(translation, slots) is None


def test_placeholder_text_in_the_sentence_or_a_target_is_never_taken_for_a_slot():
    glossary = Glossary.of({"北京": "__1__ Beijing"})
    text, slots = protect(glossary, "见__1__和北京")
    assert text == "见__1__和__2__"
    assert restore("see __1__ and __2__", slots) == "see __1__ and __1__ Beijing"  # one pass


def fake_model(lost: set[str] = frozenset()):
    """Copies its input, upper-cased, dropping the placeholders of the inputs in `lost`; records each call."""
    calls = []

    def translate(texts):
        calls.append(list(texts))
        return [(t.replace("__1__", "") if t in lost else t).upper() for t in texts]

    translate.calls = calls
    return translate


def test_translate_with_glossary_uses_placeholders_in_one_batch_call():
    model = fake_model()
    out = translate_with_glossary(
        model, ["go to beijing now.", "stay.", "go to beijing now."], Glossary.of({"beijing": "Beijing"})
    )
    assert out == ["GO TO Beijing NOW.", "STAY.", "GO TO Beijing NOW."]
    assert model.calls == [["go to __1__ now.", "stay."]]


def test_a_lost_placeholder_falls_back_to_translating_the_pieces_between_terms():
    model = fake_model(lost={"go to __1__ now."})
    out = translate_with_glossary(model, ["go to beijing now."], Glossary.of({"beijing": "Beijing"}))
    assert out == ["GO TO Beijing NOW."] and "__" not in out[0]
    assert model.calls == [["go to __1__ now."], ["go to", "now."]]


def test_a_sentence_that_is_only_terms_needs_no_model():
    model = fake_model()
    assert translate_with_glossary(model, ["北京 上海"], Glossary.of({"北京": "Beijing", "上海": "Shanghai"})) == [
        "Beijing Shanghai"
    ]
    assert model.calls == []


def test_pieces_and_terms_join_with_spaces_only_between_spaced_words():
    assert join_parts(["Hello,", "Beijing", "!"]) == "Hello, Beijing!"
    assert join_parts(["我爱", "Beijing", "天安门。"]) == "我爱Beijing天安门。"
    assert join_parts(["I like", "C++", "(a lot)."]) == "I like C++ (a lot)."
    glossary = Glossary.of({"北京": "Beijing"})
    assert insert_terms(fake_model(), ["北京，你好"], glossary) == {"北京，你好": "Beijing，你好"}


# Through the shipped copy model -----------------------------------------------------------------


@pytest.fixture(scope="module")
def engine():
    from worker.translation.model.engine import TranslationEngine

    return TranslationEngine(Settings(model=str(COPY_MODEL)))  # as a worker runs it: int8, greedy


@pytest.mark.parametrize("form", ["__1__", "__2__", "__12__"])
def test_the_placeholder_survives_the_marian_tokenizer_and_the_copy_model(engine, form):
    sentences = [
        f"我喜欢{form}和你。",
        f"{form}是一个很好的地方。",
        f"请把{form}发给我，谢谢。",
        f"I like {form} very much.",
    ]
    ids = engine.token_ids(sentences)
    assert [engine.tokenizer.decode(i) for i in ids] == sentences
    assert engine.translate_ids(ids) == sentences


def test_terms_appear_verbatim_through_the_engine_and_plain_sentences_are_untouched(engine):
    from worker.translation.model.text_batches import translate_texts

    glossary = Glossary.of({"北京": "Beijing", "天气": "weather", "GitHub": "GitHub", "缓存": "CACHE"})
    sentences = ["今天北京的天气很好。", "谢谢你的帮助！", "缓存测试第一句。", "我们在GitHub上见。"]
    out = translate_with_glossary(lambda texts: translate_texts(engine, texts), sentences, glossary)
    assert out == ["今天Beijing的weather很好。", "谢谢你的帮助！", "CACHE测试第一句。", "我们在GitHub上见。"]


def test_the_fallback_through_the_engine_keeps_the_terms_and_leaks_no_placeholder(engine):
    from worker.translation.model.text_batches import translate_texts

    glossary = Glossary.of({"北京": "Beijing"})
    pieces = insert_terms(lambda texts: translate_texts(engine, texts), ["今天北京的天气很好。"], glossary)
    assert pieces == {"今天北京的天气很好。": "今天Beijing的天气很好。"}

    def dropping(texts):  # the engine, with every placeholder lost on the way (as a real model may)
        return [t.replace("__1__", "") for t in translate_texts(engine, texts)]

    out = translate_with_glossary(dropping, ["今天北京的天气很好。"], glossary)
    assert out == ["今天Beijing的天气很好。"]


def test_the_glossary_example_of_the_api_manual_gives_what_it_says(engine):
    """docs/api.md, Glossaries: `今天北京的天气很好。我们在GitHub上见。` with {"北京": "Beijing", "GitHub": "GitHub"}."""
    from worker.translation.model.text_batches import translate_texts

    glossary = Glossary.of({"北京": "Beijing", "GitHub": "GitHub"})
    sentences = ["今天北京的天气很好。", "我们在GitHub上见。"]
    out = translate_with_glossary(lambda texts: translate_texts(engine, texts), sentences, glossary)
    assert "".join(out) == "今天Beijing的天气很好。我们在GitHub上见。"
    assert "`今天Beijing的天气很好。我们在GitHub上见。`" in (ROOT / "docs" / "api.md").read_text(encoding="utf-8")

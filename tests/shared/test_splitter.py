import pytest

from shared.text.splitter import join_translations, sentences, split_long, split_text


def roundtrip(text: str) -> list:
    segments = split_text(text)
    assert "".join(s.text for s in segments) == text
    return segments


def test_chinese_terminators_split_and_keep_punctuation():
    segs = roundtrip("今天天气很好。明天下雨！你来吗？我来；好的")
    assert sentences(segs) == ["今天天气很好。", "明天下雨！", "你来吗？", "我来；", "好的"]


def test_ascii_terminators_and_decimals():
    segs = roundtrip("It costs 3.14 dollars. Really? Yes! See example.com now")
    assert sentences(segs) == ["It costs 3.14 dollars.", "Really?", "Yes!", "See example.com now"]


def test_line_breaks_and_whitespace_are_kept_as_gaps():
    text = "第一段。\n\n  第二段第一句。第二句。\r\n第三段"
    segs = roundtrip(text)
    assert sentences(segs) == ["第一段。", "第二段第一句。", "第二句。", "第三段"]
    joined = join_translations(segs, ["A.", "B.", "C.", "D"])
    assert joined == "A.\n\n  B. C.\r\nD"


def test_closing_quotes_stay_with_their_sentence():
    segs = roundtrip("他说：“好。”然后走了。")
    assert sentences(segs) == ["他说：“好。”", "然后走了。"]


def test_untranslatable_spans_pass_through():
    segs = roundtrip("😀 \n…")
    assert sentences(segs) == []
    assert join_translations(segs, []) == "😀 \n…"


def test_long_sentence_is_split_not_truncated():
    text = "这是一个很长的句子，" * 50
    pieces = split_long(text, 100)
    assert all(len(p) <= 100 for p in pieces)
    assert "".join(pieces) == text
    no_punctuation = "字" * 1000
    pieces = split_long(no_punctuation, 300)
    assert "".join(pieces) == no_punctuation and max(map(len, pieces)) <= 300


def test_hard_cut_never_splits_a_combining_mark():
    text = "e\u0301" * 200
    pieces = split_long(text, 101)
    assert "".join(pieces) == text
    assert all(not p.startswith("\u0301") for p in pieces)


def test_join_inserts_space_only_between_touching_sentences():
    segs = roundtrip("一。二。")
    assert join_translations(segs, ["One.", "Two."]) == "One. Two."


def test_a_texts_stored_spans_give_back_its_split_exactly():
    """What a job stores of its split (spans_of) gives the worker the same segments (segments_at), whatever
    was cut, stripped or kept: the worker reads the API's split, never splits again."""
    import random

    from shared.text.splitter import segments_at, spans_of

    rng = random.Random(7)
    alphabet = '你好。，！？ab c.\n…；;!?"”）  \t'
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        for limit in (5, 20, 300):
            segments = split_text(text, limit)
            assert segments_at(text, spans_of(text, segments)) == segments, (text, limit)


def test_spans_that_do_not_fit_their_text_are_refused():
    from shared.text.splitter import segments_at

    with pytest.raises(ValueError):
        segments_at("abc", [0, 9, 1])
    with pytest.raises(ValueError):
        segments_at("abc", [0, 1])

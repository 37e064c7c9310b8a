"""Protected spans (shared.text.protected_spans) and the fidelity check (shared.text.fidelity): pure, no model."""

from __future__ import annotations

import pytest

from shared.text.fidelity import check, gate_summary, summary, untranslated_pattern
from shared.text.glossary import Glossary
from shared.text.protected_spans import ProtectedTerms, spans_of
from shared.text.term_protection import translate_with_glossary


@pytest.mark.parametrize(
    ("sentence", "spans"),
    [
        ("See https://example.com/a?b=1. Then go.", ["https://example.com/a?b=1"]),
        ("Mail bob.smith@example.org today", ["bob.smith@example.org"]),
        ("Due 2026-01-02 at 10:30, or 02/01/2026.", ["2026-01-02", "10:30", "02/01/2026"]),
        ("Pay $1,234.50 or 3.5% of 10 km", ["$1,234.50", "3.5%", "10 km"]),
        ("Hello {name}, {{ user }} has %s and %(count)d", ["{name}", "{{ user }}", "%s", "%(count)d"]),
        ("Run `ls -la` in <b>bold</b>", ["`ls -la`", "<b>", "</b>"]),
        ("我有3个苹果，价格是12.5元。", ["3", "12.5"]),
        ("2026年1月2日发布", ["2026年1月2日"]),
        ("mp3 H2O COVID-19 five men", []),  # digits inside words are words
        ("A __1__ B", []),  # term protection's own placeholder is not a span
    ],
)
def test_spans_found(sentence, spans):
    assert spans_of(sentence) == spans


def test_spans_with_only_spaces_between_are_one_term_of_their_exact_text():
    matches = ProtectedTerms().matches("at 10:30 pm, $5  10% off")
    assert [m.target for m in matches] == ["10:30 pm", "$5  10%"]


def test_a_glossary_term_wins_over_a_span_it_overlaps():
    glossary = Glossary.of({"版本2": "version two"})
    assert [m.target for m in ProtectedTerms(glossary).matches("版本2 和 3")] == ["version two", "3"]


def test_spans_come_back_exactly_through_a_model_that_mangles_them():
    def mangle(texts):  # loses every placeholder and digit, as a random model does
        return [" ".join("x" if any(c.isdigit() for c in w) else w for w in t.split()) for t in texts]

    sentence = "Version 2.1 ships 2026-01-02 to https://example.com/dl for $10"
    out = translate_with_glossary(mangle, [sentence], ProtectedTerms())[0]  # type: ignore[arg-type]
    assert check(sentence, out) == {"kept": 4}


def test_check_flags_missing_repeated_and_untranslated():
    han = untranslated_pattern("zh", "en")
    assert check("我有3个苹果。", "I have 3 apples.", han) == {"kept": 1}
    assert check("我有3个苹果。", "I have 33 苹果.", han) == {"flags": ["span_missing", "untranslated"]}
    assert check("a 3 b", "3 3") == {"kept": 1, "flags": ["span_repeated"]}
    assert check("北京很大。", "北京 is big.", han, allowed=["北京"]) == {}  # a glossary's target term may stay
    assert untranslated_pattern("en", "zh") is None and untranslated_pattern("zh", "ja") is None


def test_summaries_count_sentences_and_gate_outcomes():
    records = [
        [{"kept": 2, "repaired": 1}, {}],
        [{"flags": ["low_confidence"], "retried": ["low_confidence"], "withheld": True}],
    ]
    assert summary(records) == {"sentences": 3, "kept": 2, "repaired": 1, "flagged": 1, "flags": {"low_confidence": 1}}
    assert gate_summary(records, -1.0) == {"min_confidence": -1.0, "retried": 1, "low_confidence": 1, "withheld": 1}


def test_hostile_sentences_are_scanned_without_backtracking():
    # Each alternative is bounded or stops at a character class: a pattern that backtracked would hang here.
    for hostile in (
        "a" * 40000,
        "1," * 20000,
        "%" * 40000,
        "<a " * 15000,
        "{" * 40000,
        "`" * 40000,
        "a@" * 20000,
        "http://" * 6000,
    ):
        assert isinstance(spans_of(hostile), list)

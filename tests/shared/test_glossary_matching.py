"""Glossary matching with an Aho–Corasick automaton (RELIABILITY 109): exactly the matches of the passes it
replaced (kept here as the reference, `reference_matches`) on many generated glossaries and sentences, its
character classes checked on every code point, and its work on the API's path counted, not timed."""

from __future__ import annotations

import random
import sys
import unicodedata

import pytest

from shared.settings import Settings
from shared.store.sentence_cache import glossary_namespace
from shared.text import glossary, glossary_matching
from shared.text.glossary import Glossary, GlossaryError, Match, is_cjk, is_word_char

# The reference: Glossary.matches before the automaton (one pass per term length, longest first) ------------


class PassesGlossary:
    """Glossary.matches through VERSION 1 before the automaton, as it was written: one pass per term length,
    longest first, each position looked up in a dict (bench.glossary_matching times it against the automaton)."""

    def __init__(self, terms: dict[str, str]):
        variants: dict[str, str] = {}
        for source, target in sorted(terms.items()):
            if source.islower():
                variants.setdefault(source[0].upper() + source[1:], target)
        variants.update(sorted(terms.items()))
        lengths: dict[int, dict[str, str]] = {}
        for variant, target in variants.items():
            lengths.setdefault(len(variant), {})[variant] = target
        self.by_length = [
            (n, {v[0] for v in lengths[n]}, {v[-1] for v in lengths[n]}, lengths[n]) for n in sorted(lengths)[::-1]
        ]

    def matches(self, sentence: str) -> list[Match]:
        taken: list[Match] = []
        size = len(sentence)
        free, blocked = size, [size] * (size + 1)
        for length, firsts, lasts, targets in self.by_length:
            if length > free:
                continue
            last_end, before = 0, len(taken)
            for start in [i for i in range(size - length + 1) if sentence[i] in firsts]:
                end = start + length
                if start < last_end or blocked[start] < end or sentence[end - 1] not in lasts:
                    continue
                target = targets.get(sentence[start:end])
                if target is not None and _bounded(sentence, start, end):
                    taken.append(Match(start, end, target))
                    last_end = end
            if len(taken) > before:
                free, blocked = _longest_free(size, taken), _blocked(size, taken)
        return sorted(taken, key=lambda m: m.start)


def reference_matches(terms: dict[str, str], sentence: str) -> list[Match]:
    return PassesGlossary(terms).matches(sentence)


def _blocked(size: int, taken: list[Match]) -> list[int]:
    covered = [False] * (size + 1)
    for match in taken:
        covered[match.start : match.end] = [True] * (match.end - match.start)
    blocked, following = [size] * (size + 1), size
    for position in range(size, -1, -1):
        following = position if covered[position] and position < size else following
        blocked[position] = following
    return blocked


def _longest_free(size: int, taken: list[Match]) -> int:
    longest, at = 0, 0
    for match in sorted(taken, key=lambda m: m.start):
        longest, at = max(longest, match.start - at), match.end
    return max(longest, size - at)


def _bounded(sentence: str, start: int, end: int) -> bool:
    if is_word_char(sentence[start]) and start > 0 and is_word_char(sentence[start - 1]):
        return False
    return not (is_word_char(sentence[end - 1]) and end < len(sentence) and is_word_char(sentence[end]))


# Generated cases ---------------------------------------------------------------------------------------

ALPHABETS = {
    "chinese": "北京大学生字",
    "latin words": "abAB  ",
    "latin and punctuation": "ab_+.- c",
    "mixed": "北京aA1 _.字ß",
    "capitals": "cClL o",
    # ß upper-cases to SS (a longer variant), é, a non-BMP Han character (no boundary) and a non-BMP letter
    # (a boundary), full-width Ａ (CJK: none), and the marks' own control characters in the text
    "edge": "ßSsé𠀀𝐀Ａa \x01\x02",
}


def random_case(rng: random.Random, alphabet: str) -> tuple[dict[str, str], list[str]]:
    sentences = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(4)]
    terms: dict[str, str] = {}
    for _ in range(rng.randint(1, 12)):
        source = rng.choice(sentences)
        if rng.random() < 0.7 and source:  # a piece of a sentence: it matches, unless a boundary stops it
            start = rng.randrange(len(source))
            term = source[start : start + rng.randint(1, 8)]
        else:
            term = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
        if rng.random() < 0.2 and term:  # a term nested in another: its prefix or suffix
            term = term[: rng.randint(1, len(term))] if rng.random() < 0.5 else term[rng.randint(0, len(term) - 1) :]
        term = " ".join(term.replace("\x01", "").replace("\x02", "").split())  # as Glossary.parse keeps it
        if term:
            terms[term] = f"T{len(terms)}"
    return terms, sentences


@pytest.mark.parametrize("name", sorted(ALPHABETS))
@pytest.mark.parametrize("per_char", [glossary_matching.OCCURRENCES_PER_CHAR, 0])
def test_the_automaton_finds_exactly_what_the_passes_found(name, per_char, monkeypatch):
    """Through the automaton, and (per_char 0: past the limit at the first occurrence) through the passes it
    keeps for sentences with very many occurrences."""
    monkeypatch.setattr(glossary_matching, "OCCURRENCES_PER_CHAR", per_char)
    monkeypatch.setattr(glossary_matching, "OCCURRENCES_SLACK", 0 if per_char == 0 else 64)
    rng = random.Random(f"glossary-{name}")
    compared = matched = 0
    for _ in range(600):
        terms, sentences = random_case(rng, ALPHABETS[name])
        made = Glossary.of(terms)
        for sentence in sentences:
            expected = reference_matches(terms, sentence)
            assert made.matches(sentence) == expected, (terms, sentence)
            assert made.found_in(sentence) == bool(expected), (terms, sentence)
            compared, matched = compared + 1, matched + bool(expected)
        own = glossary_namespace("ns", made.digest)
        assert made.cache_namespaces("ns", sentences) == [
            own if reference_matches(terms, s) else "ns" for s in sentences
        ]
    assert compared == 2400 and 500 < matched < 2300  # the cases match often, and not always


@pytest.mark.parametrize(
    "terms, sentence",
    [
        ({"a": "1", "aa": "2", "aaa": "3"}, "aaaaaaa"),  # one word: no term matches inside it
        ({"a": "1", "aa": "2", "aaa": "3"}, "a aa aaa aaaa a"),
        ({"字": "1", "字字": "2", "字字字": "3"}, "字" * 10),  # nested CJK terms: longest first, then what is left
        ({"ab": "1", "bc": "2", "abc": "3", "cd": "4"}, "abcd"),
        ({"北京": "B", "北京大学": "PKU", "大学生": "S"}, "北京大学生在北京。"),
        ({"cloud": "n", "Cloud": "N", "cloud computing": "cc"}, "Cloud computing, cloud computing, CLOUD."),
        ({"ßtraße": "street"}, "SStraße ßtraße Straße"),  # ß's upper case is SS
        ({"API": "API", "C++": "C++", "服务": "service"}, "调用API接口的服务器 C++ C++x APIs"),
        ({"a b": "1", "b c": "2"}, "a b c"),
        ({"x": "1"}, "\x01x\x02 x\x01 \x02x"),
    ],
)
def test_chosen_cases_match_the_reference(terms, sentence):
    expected = reference_matches(terms, sentence)
    assert Glossary.of(terms).matches(sentence) == expected
    assert (
        glossary_matching.Passes(glossary_matching.variants(tuple(sorted(terms.items())))).matches(sentence) == expected
    )


def test_the_character_classes_agree_with_the_rules_on_every_code_point():
    word = glossary_matching._WORD_RUN
    forbidden = glossary._FORBIDDEN
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert bool(word.fullmatch(char)) == is_word_char(char), hex(code)
        refused = unicodedata.category(char) in ("Cc", "Cs") and not char.isspace()  # _clean's rule before
        assert bool(forbidden.search(char)) == refused, hex(code)
    assert not any(is_word_char(c) or is_cjk(c) for c in (glossary_matching.OPEN, glossary_matching.CLOSE))


def test_the_marks_are_never_in_a_term():
    for mark in (glossary_matching.OPEN, glossary_matching.CLOSE):
        with pytest.raises(GlossaryError, match="control character"):
            Glossary.parse({f"a{mark}b": "x"}, Settings())


def test_an_empty_glossary_matches_nothing():
    assert Glossary.of({}).matches("anything") == [] and not Glossary.of({}).found_in("anything")


# Work, counted -------------------------------------------------------------------------------------------


def near_miss_glossary() -> dict[str, str]:
    """196 terms, two of each length 3..100, whose first and last characters are everywhere in the text and
    whose middle is nowhere: the passes looked each position up once per length (the issue's 2.6 s)."""
    return {f"{a}{'x' * (n - 2)}{b}": f"T{n}{a}" for n in range(3, 101) for a, b in ("北京", "京北")}


def lines_run(call) -> int:  # type: ignore[no-untyped-def]
    """Python lines run in shared/text/glossary_matching.py during `call()`: the work done outside the automaton's and
    the regular expressions' C code, whose scans are linear in the text (counted, so no timing assertion)."""
    count = 0
    path = glossary_matching.__file__

    def trace(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal count
        if frame.f_code.co_filename != path:
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def test_the_api_path_does_constant_python_work_per_sentence_whatever_the_glossary():
    near_miss = Glossary.of(near_miss_glossary())
    one_term = Glossary.of({"上海": "Shanghai"})
    sentence = "北京" * 150  # 300 characters, a sentence as the splitter leaves it
    near_miss.found_in(sentence), one_term.found_in(sentence)  # the automata built (once per glossary)
    assert reference_matches(near_miss.as_dict(), sentence) == []
    for sentences in ([sentence] * 10, [sentence] * 40):
        near = lines_run(lambda s=sentences: near_miss.cache_namespaces("ns", s))
        one = lines_run(lambda s=sentences: one_term.cache_namespaces("ns", s))
        assert near == one  # 196 terms of 98 lengths cost what one term does
        assert near <= 8 * len(sentences) + 10  # a few lines per sentence: the scan itself is C
    # The passes looked up each position once per length: about 98 x 300 per sentence.
    assert lines_run(lambda: [glossary_matching.Matcher]) < 10


def test_matches_work_is_bounded_by_the_occurrences_and_their_limit():
    near_miss = Glossary.of(near_miss_glossary())
    sentence = "北京" * 150
    near_miss.matches(sentence)
    assert lines_run(lambda: near_miss.matches(sentence)) <= 10  # no occurrence: one scan, nothing to take
    # A few occurrences: three lines each to sort them by length, four to look at each, four to take one.
    terms = {"北京": "Beijing", "京北": "x", "北京北": "y"}
    few = Glossary.of(terms)
    assert few.matches(sentence) == reference_matches(terms, sentence)
    occurrences = 150 + 149 + 149
    assert lines_run(lambda: few.matches(sentence)) <= 12 * occurrences
    # Nested terms: every length at every position occurs (25,050 in 300 characters). Past the limit of
    # occurrences per character the passes take over, and their first, longest, length covers the sentence.
    nested = Glossary.of({"字" * n: f"T{n}" for n in range(1, 101)})
    for size in (100, 300):
        text = "字" * size
        assert [m.end - m.start for m in nested.matches(text)] == [100] * (size // 100)
        limit = glossary_matching.OCCURRENCES_PER_CHAR * size + glossary_matching.OCCURRENCES_SLACK
        assert lines_run(lambda t=text: nested.matches(t)) <= 3 * limit + 6 * size + 3 * 100


def test_an_automaton_is_built_once_per_glossary():
    terms = {f"term{i}": "x" for i in range(50)}
    first, second = Glossary.of(terms), Glossary.of(dict(reversed(list(terms.items()))))
    first.found_in("term1")
    assert second._matcher is first._matcher  # the same terms: the automaton kept (glossary_matching.matcher_for)

"""Finding a glossary's terms in a sentence by the rules of shared.text.glossary (longest first, word
boundaries in spaced scripts, a lower-case term also with its first letter upper case): whether it has one in
a scan linear in its length whatever the terms hold, its matches in its length plus its occurrences
(RELIABILITY 98, 111).

One Aho–Corasick automaton per glossary (pyahocorasick; built once and kept: matcher_for) finds every
occurrence of its terms in one pass. The word-boundary rule is built into it: the sentence and each term are
matched with a mark before and after each run of word characters (marked), so a term that begins with a word
character begins with the mark and is found only where a word begins, and likewise at its end; every
occurrence found is a match by the boundary rules. So:

- whether a sentence has a match (Matcher.found_in: what the API asks for each sentence of a request, on its
  request thread) is one scan of it that stops at the first occurrence;
- its matches (Matcher.matches, for the worker) take its occurrences by length, longest first, each length's
  left to right, where no match covers any of their characters yet: the rule of the passes this replaced
  (one pass over the sentence per term length), at the cost of its length plus its occurrences. A sentence
  has at most one occurrence per distinct term length ending at each character, and nested terms (`字`, `字字`,
  … in `字字字…`) reach that; past OCCURRENCES_PER_CHAR occurrences per character a sentence is matched by
  the passes instead (Passes: the same matches, at their cost: the distinct lengths times its length, and
  quick where long terms soon cover it, as nested terms do).
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

import ahocorasick

# A sentence with more occurrences than this per character, plus OCCURRENCES_SLACK, is matched by Passes.
OCCURRENCES_PER_CHAR = 4
OCCURRENCES_SLACK = 64
# A run of word characters (is_word_char): `\w` is str.isalnum() or "_", less the CJK ranges of is_cjk.
_WORD_RUN = re.compile(r"[^\W\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\U00020000-\U0010ffff]+")
# The marks `marked` puts around each run: control characters, never in a term (Glossary.parse refuses them).
OPEN, CLOSE = "\x01", "\x02"


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    target: str


def is_cjk(char: str) -> bool:
    """Characters of scripts written without spaces between words: no word boundary around them."""
    code = ord(char)
    return 0x2E80 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0xFF00 <= code <= 0xFFEF or code >= 0x20000


def is_word_char(char: str) -> bool:
    """A letter, digit or underscore of a script written with spaces: a term must not continue into one."""
    return (char.isalnum() or char == "_") and not is_cjk(char)


def marked(text: str) -> str:
    """The text with OPEN before and CLOSE after each run of word characters. A term marked alike occurs in
    the marked sentence exactly where it matches the sentence: the marks inside it are the sentence's there
    (a mark depends only on the two characters around it); one that begins with a word character begins with
    OPEN, which the sentence has there only where no word character comes before; likewise CLOSE at its end;
    and the sentence's own control characters (a literal OPEN) never stand next to a word character."""
    return _WORD_RUN.sub(OPEN + "\\g<0>" + CLOSE, text)


def marks(text: str) -> list[int]:
    """Where marked(text) has its marks, in order: the positions of the marked text that are not the text's."""
    found: list[int] = []
    for run, word in enumerate(_WORD_RUN.finditer(text)):
        found += (word.start() + 2 * run, word.end() + 2 * run + 1)
    return found


def variants(terms: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """What is matched, and its target: each term, and a lower-case term with its first letter upper case
    (`cloud` also as `Cloud`, unless the glossary has `Cloud` itself)."""
    found: dict[str, str] = {}
    for source, target in terms:
        if source.islower():
            found.setdefault(source[0].upper() + source[1:], target)
    found.update(terms)
    return found


class Matcher:
    """A glossary's variants in one Aho–Corasick automaton over marked text."""

    def __init__(self, terms: tuple[tuple[str, str], ...]):
        self.variants = found = variants(terms)
        self.targets = list(found.values())
        self.lengths = [len(variant) for variant in found]
        self.back: list[int] = []  # from where an occurrence ends in the marked text to its first character
        self.automaton: ahocorasick.Automaton | None = None
        if found:
            self.automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
            for index, variant in enumerate(found):
                key = marked(variant)
                self.automaton.add_word(key, index)
                self.back.append(len(key) - 1 - (key[0] == OPEN))
            self.automaton.make_automaton()

    def found_in(self, sentence: str) -> bool:
        """Whether any term matches: every occurrence in the marked sentence is a match, so the first one found
        answers (matches(sentence) is not empty exactly then: the longest one is always taken)."""
        return self.automaton is not None and next(self.automaton.iter(marked(sentence)), None) is not None

    def matches(self, sentence: str) -> list[Match]:
        if self.automaton is None:
            return []
        limit = OCCURRENCES_PER_CHAR * len(sentence) + OCCURRENCES_SLACK
        lengths, back = self.lengths, self.back
        by_length: dict[int, list[tuple[int, int]]] = {}
        for count, (end, index) in enumerate(self.automaton.iter(marked(sentence)), start=1):
            if count > limit:
                return self._passes.matches(sentence)
            by_length.setdefault(lengths[index], []).append((end - back[index], index))  # where it begins
        return self._take(sentence, by_length) if by_length else []

    def _take(self, sentence: str, by_length: dict[int, list[tuple[int, int]]]) -> list[Match]:
        """The passes' rule on the occurrences: by length, longest first, each length's left to right, each
        taken where no match taken covers any of its characters (a byte per character says which are)."""
        places = marks(sentence)
        covered, free, taken = bytearray(len(sentence)), len(sentence), []  # free: characters not covered
        for length in sorted(by_length, reverse=True):
            for at, index in sorted(by_length[length]):  # one occurrence of a length per position
                if length > free:
                    break
                start = at - bisect.bisect_left(places, at)
                if covered.find(1, start, start + length) < 0:
                    covered[start : start + length] = b"\x01" * length
                    free -= length
                    taken.append(Match(start, start + length, self.targets[index]))
        return sorted(taken, key=lambda m: m.start)

    @functools.cached_property
    def _passes(self) -> Passes:  # made when a sentence first needs them
        return Passes(self.variants)


class Passes:
    """The matching before the automaton: one pass over the sentence per term length, longest first, left to
    right, each position looked up in a dict; kept for sentences with very many occurrences (see the module)."""

    def __init__(self, found: dict[str, str]):
        lengths: dict[int, dict[str, str]] = {}
        for variant, target in found.items():
            lengths.setdefault(len(variant), {})[variant] = target
        self.by_length = [(n, {v[0] for v in lengths[n]}, {v[-1] for v in lengths[n]}, lengths[n]) for n in lengths]
        self.by_length.sort(key=lambda entry: -entry[0])

    def matches(self, sentence: str) -> list[Match]:
        taken: list[Match] = []
        size = len(sentence)
        covered, free = bytearray(size), size  # free: the longest run of characters no match covers
        for length, firsts, lasts, targets in self.by_length:
            if length > free:
                continue
            last_end, before = 0, len(taken)
            for start in [i for i, c in enumerate(sentence[: size - length + 1]) if c in firsts]:
                end = start + length
                if start < last_end or sentence[end - 1] not in lasts:
                    continue
                target = targets.get(sentence[start:end])
                if target is not None and covered.find(1, start, end) < 0 and _bounded(sentence, start, end):
                    taken.append(Match(start, end, target))
                    covered[start:end] = b"\x01" * length
                    last_end = end
            if len(taken) > before:
                free = max(map(len, covered.split(b"\x01")))
        return sorted(taken, key=lambda m: m.start)


def _bounded(sentence: str, start: int, end: int) -> bool:
    """The match does not begin or end inside a word of a spaced script."""
    if is_word_char(sentence[start]) and start > 0 and is_word_char(sentence[start - 1]):
        return False
    return not (is_word_char(sentence[end - 1]) and end < len(sentence) and is_word_char(sentence[end]))


@functools.lru_cache(maxsize=4)
def matcher_for(terms: tuple[tuple[str, str], ...]) -> Matcher:
    """A glossary's automaton, kept for the next request with the same terms (a stored glossary, a client's
    usual one): built in time linear in its terms' characters (about 25 ms and 10 MiB for the largest the
    default limits allow, 1,000 terms of 100 letters; a few KiB for a usual one), so at most 4 are kept."""
    return Matcher(terms)

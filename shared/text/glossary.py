"""Glossaries: terms whose translation must appear verbatim (docs/api.md, "Glossaries"). No torch: the API validates
and stores them, the worker carries the terms through the model (shared.glossary_protect).

A glossary maps source terms to target terms, `{"北京": "Beijing", "GitHub": "GitHub"}`; a term that maps to
itself is kept as written (do not translate). Matching, on a sentence as the worker translates it (normalised:
shared.store.sentence_cache.normalise):

- the longest term first, then the next longest in what is left, so matches never overlap (of two of one
  length, the first in the sentence);
- a term that begins or ends with a letter or digit of a script written with spaces (Latin, Greek, Cyrillic, …)
  matches there only at a word boundary: `API` is found in `the API.` and in `调用API接口`, not in `APIs`;
  CJK characters (Han, kana, full-width forms) need no boundary, so Chinese terms match anywhere;
- case counts, except that a term written in lower case also matches with its first letter upper case
  (`cloud` finds `Cloud` at the start of a sentence, never `CLOUD`).
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Sequence

from shared.settings import Settings
from shared.store.sentence_cache import glossary_namespace, normalise

VERSION = 1  # of matching and protection: bump when either changes, so cached glossary translations miss


class GlossaryError(ValueError):
    """A glossary that breaks a rule; the message names the field at fault."""


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


@dataclass(frozen=True)
class Glossary:
    """Source term -> target term, normalised, sorted (so equal glossaries compare and digest equal)."""

    terms: tuple[tuple[str, str], ...]
    # term length -> (first characters, last characters, variant -> target), longest first (see matches())
    _by_length: list[tuple[int, set[str], set[str], dict[str, str]]] = field(
        default_factory=list, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        variants: dict[str, str] = {}
        for source, target in self.terms:
            if source.islower():  # `cloud` also as `Cloud`, unless the glossary has `Cloud` itself
                variants.setdefault(source[0].upper() + source[1:], target)
        variants.update(self.terms)
        lengths: dict[int, dict[str, str]] = {}
        for variant, target in variants.items():
            lengths.setdefault(len(variant), {})[variant] = target
        for length in sorted(lengths, reverse=True):
            found = lengths[length]
            self._by_length.append((length, {v[0] for v in found}, {v[-1] for v in found}, found))

    @classmethod
    def of(cls, terms: dict[str, str]) -> Glossary:
        """A glossary from terms already validated (a job record, a stored glossary)."""
        return cls(tuple(sorted(terms.items())))

    @classmethod
    def parse(cls, value: Any, settings: Settings, name: str = "glossary") -> Glossary:
        """Validate a request's glossary (an object of source term -> target term) within the limits
        (TRANSQ_GLOSSARY_MAX_TERMS, TRANSQ_GLOSSARY_MAX_TERM_CHARS); GlossaryError names the field."""
        if not isinstance(value, dict):
            raise GlossaryError(f'{name} must be an object of source term to target term, {{"北京": "Beijing"}}')
        if len(value) > settings.glossary_max_terms:
            raise GlossaryError(
                f"{name} has {len(value)} terms; at most {settings.glossary_max_terms} are allowed "
                "(TRANSQ_GLOSSARY_MAX_TERMS)"
            )
        terms: dict[str, str] = {}
        spelt: dict[str, str] = {}
        for raw_source, raw_target in value.items():
            where = f"{name}[{json.dumps(raw_source[:40], ensure_ascii=False)}]"
            source = _clean(raw_source, f"{where} (the source term)", settings)
            if not isinstance(raw_target, str):
                raise GlossaryError(f"{where} must be a string: the target term (the source term itself to keep it)")
            target = _clean(raw_target, where, settings)
            if source in terms and terms[source] != target:
                raise GlossaryError(
                    f"{name} gives {json.dumps(spelt[source], ensure_ascii=False)} and "
                    f"{json.dumps(raw_source, ensure_ascii=False)}, one term once normalised, different targets"
                )
            terms[source], spelt[source] = target, raw_source
        return cls.of(terms)

    def as_dict(self) -> dict[str, str]:
        return dict(self.terms)

    def __len__(self) -> int:
        return len(self.terms)

    @property
    def digest(self) -> str:
        """Stable and independent of the order the terms were given in."""
        canonical = json.dumps([VERSION, self.terms], ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:32]

    def merged(self, other: Glossary | None) -> Glossary:
        """This glossary with `other`'s terms added; `other` wins where both have a term."""
        return self if not other else Glossary.of({**self.as_dict(), **other.as_dict()})

    def matches(self, sentence: str) -> list[Match]:
        """Every term found in the sentence (see the module's docstring), in the order they appear.

        One pass per term length, longest first, left to right, each position looked up in a dict: the cost is
        the glossary's distinct lengths (at most TRANSQ_GLOSSARY_MAX_TERM_CHARS) times the sentence's length,
        whatever the terms hold (RELIABILITY 98)."""
        taken: list[Match] = []
        size = len(sentence)
        free, blocked = size, [size] * (size + 1)  # the longest uncovered run; the next covered position
        for length, firsts, lasts, targets in self._by_length:
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

    def cache_namespaces(self, namespace: str, sentences: Sequence[str]) -> list[str]:
        """Each sentence's cache namespace: the plain one where no term matches (its translation is the
        plain one), else this glossary's own (shared.store.sentence_cache.glossary_namespace)."""
        own = glossary_namespace(namespace, self.digest)
        return [own if self.matches(sentence) else namespace for sentence in sentences]


def cache_namespaces(namespace: str, sentences: Sequence[str], glossary: Glossary | None) -> list[str]:
    """The cache namespace of each sentence of a request with `glossary` (None: none)."""
    return glossary.cache_namespaces(namespace, sentences) if glossary else [namespace] * len(sentences)


def _blocked(size: int, taken: list[Match]) -> list[int]:
    """For each position, the first position at or after it that a match already covers (size: none)."""
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
    """The match does not begin or end inside a word of a spaced script."""
    if is_word_char(sentence[start]) and start > 0 and is_word_char(sentence[start - 1]):
        return False
    return not (is_word_char(sentence[end - 1]) and end < len(sentence) and is_word_char(sentence[end]))


def _clean(term: str, where: str, settings: Settings) -> str:
    """A term as matched and inserted: NFC, trimmed, whitespace runs as one space; one line of real text."""
    limit = settings.glossary_max_term_chars
    if any(unicodedata.category(c) in ("Cc", "Cs") and not c.isspace() for c in term):
        raise GlossaryError(f"{where} holds a control character or a lone surrogate")
    cleaned = normalise(term)
    if not cleaned:
        raise GlossaryError(f"{where} is empty")
    if len(cleaned) > limit:
        raise GlossaryError(f"{where} has {len(cleaned)} characters; at most {limit} (TRANSQ_GLOSSARY_MAX_TERM_CHARS)")
    return cleaned

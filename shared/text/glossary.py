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

Matching is shared.text.glossary_matching's: one Aho–Corasick automaton per glossary, in time linear in the
sentence whatever the terms hold (RELIABILITY 98, 111).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

from shared.settings import Settings
from shared.store.sentence_cache import glossary_namespace, normalise
from shared.text.glossary_matching import Match, Matcher, is_cjk, is_word_char, matcher_for

__all__ = ["VERSION", "Glossary", "GlossaryError", "Match", "is_cjk", "is_word_char"]

VERSION = 1  # of matching and protection: bump when either changes, so cached glossary translations miss

# A control character (Cc) that is not whitespace, or a lone surrogate (Cs): never in a term. The same class as
# shared.contract.fields' _CONTROL, with the surrogates; one regular-expression scan, not a call per character.
_FORBIDDEN = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ud800-\udfff]")


class GlossaryError(ValueError):
    """A glossary that breaks a rule; the message names the field at fault."""


@dataclass(frozen=True)
class Glossary:
    """Source term -> target term, normalised, sorted (so equal glossaries compare and digest equal)."""

    terms: tuple[tuple[str, str], ...]

    @functools.cached_property
    def _matcher(self) -> Matcher:
        return matcher_for(self.terms)

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

        One scan of the sentence, then its occurrences taken longest first (glossary_matching.Matcher)."""
        return self._matcher.matches(sentence)

    def found_in(self, sentence: str) -> bool:
        """Whether any term matches the sentence (matches() is not empty): one scan of it, up to the first."""
        return self._matcher.found_in(sentence)

    def cache_namespaces(self, namespace: str, sentences: Sequence[str]) -> list[str]:
        """Each sentence's cache namespace: the plain one where no term matches (its translation is the
        plain one), else this glossary's own (shared.store.sentence_cache.glossary_namespace). On the API's
        request thread for every sentence of a request: one linear scan per sentence (found_in)."""
        own = glossary_namespace(namespace, self.digest)
        found_in = self._matcher.found_in
        return [own if found_in(sentence) else namespace for sentence in sentences]


def _clean(term: str, where: str, settings: Settings) -> str:
    """A term as matched and inserted: NFC, trimmed, whitespace runs as one space; one line of real text."""
    limit = settings.glossary_max_term_chars
    if _FORBIDDEN.search(term):
        raise GlossaryError(f"{where} holds a control character or a lone surrogate")
    cleaned = normalise(term)
    if not cleaned:
        raise GlossaryError(f"{where} is empty")
    if len(cleaned) > limit:
        raise GlossaryError(f"{where} has {len(cleaned)} characters; at most {limit} (TRANSQ_GLOSSARY_MAX_TERM_CHARS)")
    return cleaned

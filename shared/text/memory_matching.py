"""Fuzzy matching of a sentence against a translation memory, the pure part: the character bigrams that index
an entry (shared.store.memory_store keeps an inverted index of them), which of a sentence's bigrams to look up,
the candidates they share, and the score: rapidfuzz's normalized Levenshtein similarity on characters (0-100),
which suits Chinese (no words needed) as well as English."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from rapidfuzz.distance import Levenshtein

# A sentence looks up LOOKUP_GRAMS of its bigrams, spread over it, whose posting list is at most
# MAX_POSTING_BYTES (about 2,500 entries at 100,000): a bigram common to more entries than that tells little and
# costs the most. Then the CANDIDATES entries sharing most of them are scored. Chosen by bench/memory_lookup.py
# (recall against scoring every entry, and the cost per sentence): the 8 rarest bigrams and 16 candidates found
# 47 of 75 best matches on a memory of near duplicates, 16 spread ones and 64 candidates all 75.
LOOKUP_GRAMS = 16
MAX_POSTING_BYTES = 16_384
CANDIDATES = 64
SUGGESTIONS = 3


def grams(sentence: str) -> list[str]:
    """The sentence's distinct character bigrams in order, case folded, without whitespace (a one-character
    sentence: itself)."""
    folded = "".join(sentence.casefold().split())
    if len(folded) < 2:
        return [folded] if folded else []
    return list(dict.fromkeys(folded[i : i + 2] for i in range(len(folded) - 1)))


def chosen_grams(sentence_grams: list[str], sizes: dict[str, int]) -> list[str]:
    """The bigrams to look up: LOOKUP_GRAMS of those whose posting list is at most MAX_POSTING_BYTES, spread
    evenly over the sentence (the rarest would all come from its rarest phrase, and every entry holding that
    phrase would tie)."""
    present = [g for g in sentence_grams if 0 < sizes.get(g, 0) <= MAX_POSTING_BYTES]
    if len(present) <= LOOKUP_GRAMS:
        return present
    step = len(present) / LOOKUP_GRAMS
    return [present[int(i * step)] for i in range(LOOKUP_GRAMS)]


def candidates(postings: Iterable[list[str]]) -> list[str]:
    """The CANDIDATES entries (their numbers) found in most of these posting lists."""
    counts: Counter[str] = Counter()
    for posting in postings:
        counts.update(posting)
    return [number for number, _ in counts.most_common(CANDIDATES)]


def score(sentence: str, source: str) -> float:
    """How alike two normalised sentences are: normalized Levenshtein similarity on characters, 0-100."""
    return round(Levenshtein.normalized_similarity(sentence, source) * 100, 1)


def best(sentence: str, entries: Iterable[tuple[str, str]], threshold: float) -> list[dict[str, object]]:
    """The SUGGESTIONS best entries scoring at least `threshold`: [{source, target, score}], best first."""
    found = {}
    for source, target in entries:
        value = score(sentence, source)
        if value >= threshold and source not in found:
            found[source] = {"source": source, "target": target, "score": value}
    return sorted(found.values(), key=lambda s: -s["score"])[:SUGGESTIONS]  # type: ignore[operator]

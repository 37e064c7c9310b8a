"""Glossary matching: the Aho–Corasick automaton (shared.text.glossary, RELIABILITY 109) against the passes it
replaced, one per term length (tests/shared/test_glossary_matching.py keeps them as the reference), in process.

Each glossary with a 100,000-character request (the default TRANSQ_MAX_CHARS), split into sentences as the
API splits it. The API asks, for each sentence, whether a term matches (Glossary.cache_namespaces, on its
request thread): the passes found every match for that; the automaton is built (counted here: a new glossary
per request, nothing kept) and then scans each sentence until its first occurrence. The worker takes each
matched sentence's matches, longest first (Glossary.matches). CPU time (time.process_time), best of --repeat.

    python -m bench.glossary_matching [--repeat 3]
"""

from __future__ import annotations

import argparse
import collections
import random
import time
from pathlib import Path
from typing import Callable

from bench.common import machine, table
from shared.settings import Settings
from shared.store.sentence_cache import normalise
from shared.text import glossary_matching
from shared.text.glossary import Glossary
from shared.text.splitter import split_texts
from tests.shared.test_glossary_matching import PassesGlossary, near_miss_glossary

CHARS = 100_000


def cases() -> dict[str, tuple[dict[str, str], str]]:
    """Glossary and 100,000-character text of each row."""
    rng = random.Random(5)
    words = (Path(__file__).parent / "data" / "zh_sentences.txt").read_text(encoding="utf-8")
    commonest = collections.Counter(
        words[i : i + 2] for i in range(len(words) - 1) if all("\u4e00" <= c <= "\u9fff" for c in words[i : i + 2])
    )
    return {
        "the issue's: 196 near misses, 2 of each length 3-100": (near_miss_glossary(), "北京" * (CHARS // 2)),
        "nested: 字 … 字×100, every length everywhere": ({"字" * n: f"T{n}" for n in range(1, 101)}, "字" * CHARS),
        "nested 字 … 字×10 and near misses of lengths 11-100": (
            {
                **{"字" * n: f"T{n}" for n in range(1, 11)},
                **{k: v for k, v in near_miss_glossary().items() if len(k) > 10},
            },
            ("北京" * 75 + "字" * 150) * (CHARS // 300) + "北京" * 50,
        ),
        "the largest allowed: 1,000 terms of 100 lower-case letters": (
            {"".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(100)): "x" * 100 for _ in range(1000)},
            "北京" * (CHARS // 2),
        ),
        "200 commonest two-character words, real sentences": (
            {word: f"T{n}" for n, (word, _) in enumerate(commonest.most_common(200))},
            (words * (CHARS // len(words) + 1))[:CHARS],
        ),
    }


def best_ms(repeat: int, call: Callable[[], object]) -> float:
    timings = []
    for _ in range(repeat):
        started = time.process_time()
        call()
        timings.append(time.process_time() - started)
    return min(timings) * 1000


def fresh(terms: dict[str, str]) -> Glossary:
    """The glossary with its automaton built now, as for a request that brings a new one."""
    glossary_matching.matcher_for.cache_clear()
    glossary = Glossary.of(terms)
    glossary.found_in("")
    return glossary


def row(name: str, terms: dict[str, str], text: str, settings: Settings, repeat: int) -> list[object]:
    sentences = [normalise(s) for s in split_texts([text], settings, "the texts have")[1]]
    per_300 = 300 / sum(len(s) for s in sentences)
    passes, glossary = PassesGlossary(terms), fresh(terms)
    matched = [s for s in sentences if glossary.found_in(s)]
    assert [bool(passes.matches(s)) for s in sentences] == [glossary.found_in(s) for s in sentences]
    old_api = best_ms(repeat, lambda: [bool(passes.matches(s)) for s in sentences])
    build = best_ms(repeat, lambda: fresh(terms))
    new_api = build + best_ms(repeat, lambda: glossary.cache_namespaces("ns", sentences))
    old_worker = best_ms(repeat, lambda: [passes.matches(s) for s in matched])
    new_worker = best_ms(repeat, lambda: [glossary.matches(s) for s in matched])
    counts = f"{len(sentences)} ({len(matched)})"
    api = [old_api * per_300, new_api * per_300, old_api, build, new_api, old_api / new_api]
    return [name, counts, *api, old_worker, new_worker]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measure; the best is kept")
    args = parser.parse_args()
    settings = Settings()
    rows = [row(name, terms, text, settings, args.repeat) for name, (terms, text) in cases().items()]
    print(f"\n{machine()}\n")
    headers = [
        "glossary, 100,000 characters",
        "sentences (matched)",
        "API, passes: ms per 300 chars",
        "API, automaton: ms per 300 chars",
        "API, passes: ms per request",
        "automaton build ms",
        "API, automaton: ms per request (build included)",
        "÷",
        "worker matches, passes: ms",
        "worker matches, automaton: ms",
    ]
    print(table(headers, rows))
    worst = max(r[6] for r in rows)
    print(f"\nworst_api_ms_per_request={worst:.1f} (the automaton, built for the request)")


if __name__ == "__main__":
    main()

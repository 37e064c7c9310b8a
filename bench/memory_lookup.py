"""Translation memory lookups at 100,000 entries: the fuzzy lookup through the bigram index in Redis
(shared.store.memory_store.MemoryStore.suggestions, as the worker runs it for a job's sentences) against the
baseline of scoring every entry (rapidfuzz.process.extract over all sources, the same scorer, in C++), and the
exact lookup (MemoryStore.exact, as the API runs it at submission). Per sentence: wall time with the round trips
to a private redis-server on loopback, and the index's recall (its best suggestion is the full scan's).

The memory is made from bench/data/zh_sentences.txt: its sentences' clauses recombined, numbered and edited, so
many entries are near duplicates of each other, as in a real memory. Queries: half are entries edited at 10 %
of their characters (a fuzzy match exists), half are new combinations (mostly none does).

    python -m bench.memory_lookup [--entries 100000] [--queries 200] [--threshold 75]
"""

from __future__ import annotations

import argparse
import random
import re
import time
from pathlib import Path

import redis
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from bench.common import machine, table
from bench.engines import cpu_flags
from devstack.redis_server import RedisServer
from shared.settings import Settings
from shared.store.keys import Keys
from shared.store.memory_store import MemoryStore
from shared.store.sentence_cache import normalise
from shared.text import memory_matching


def clauses() -> list[str]:
    text = (Path(__file__).parent / "data" / "zh_sentences.txt").read_text(encoding="utf-8")
    return [c for c in (normalise(x) for x in re.split(r"[，。！？；,.!?;\n]", text)) if 4 <= len(c) <= 60]


def memory(count: int, rng: random.Random) -> dict[str, str]:
    parts, entries = clauses(), {}
    while len(entries) < count:
        source = "，".join(rng.sample(parts, rng.randint(1, 3))) + f"（第{rng.randint(1, 9999)}条）。"
        entries[source] = f"translation {len(entries)}"
    return entries


def edited(sentence: str, rng: random.Random, share: float = 0.1) -> str:
    chars, pool = list(sentence), "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动"
    for _ in range(max(1, int(len(chars) * share))):
        chars[rng.randrange(len(chars))] = rng.choice(pool)
    return "".join(chars)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--threshold", type=float, default=75)
    args = parser.parse_args()
    rng = random.Random(11)
    entries = memory(args.entries, rng)
    sources = list(entries)
    near = [edited(s, rng) for s in rng.sample(sources, args.queries // 2)]
    new = list(memory(args.queries - len(near), random.Random(12)))
    queries = near + new
    with RedisServer() as server:
        settings = Settings(redis_url=server.url, memory_max_entries=args.entries, client_storage_bytes=0)
        client = redis.Redis.from_url(server.url, decode_responses=True)
        store = MemoryStore(client, Keys(settings.key_prefix), settings)
        started = time.perf_counter()
        stored = store.create("bench", "bench", "zh", "en", entries)
        imported = time.perf_counter() - started
        used = sum(client.memory_usage(k) or 0 for k in client.keys("*memory:*"))

        started = time.perf_counter()
        batched = store.suggestions("bench", [stored.id], queries, args.threshold)  # a job's sentences together
        batch_ms = (time.perf_counter() - started) * 1000 / len(queries)
        started = time.perf_counter()
        single = [store.suggestions("bench", [stored.id], [q], args.threshold)[0] for q in queries]
        single_ms = (time.perf_counter() - started) * 1000 / len(queries)
        started = time.perf_counter()
        store.exact("bench", [stored.id], queries)
        exact_ms = (time.perf_counter() - started) * 1000 / len(queries)

        started = time.perf_counter()
        full = []
        for q in queries:
            found = process.extract(q, sources, scorer=Levenshtein.normalized_similarity, limit=3,
                                    score_cutoff=args.threshold / 100)  # fmt: skip
            full.append(
                memory_matching.best(q, [(sources[i], entries[sources[i]]) for _, _, i in found], args.threshold)
            )
        full_ms = (time.perf_counter() - started) * 1000 / len(queries)

    wanted = [i for i, f in enumerate(full) if f]
    spurious = sum(bool(batched[i]) and not full[i] for i in range(len(queries)))
    print(
        f"\n{machine()}; CPU flags: {cpu_flags()}\n{len(entries)} entries imported in {imported:.1f} s, "
        f"{used / 2**20:.0f} MiB in Redis; {len(queries)} queries ({len(near)} edited entries, {len(new)} new), "
        f"threshold {args.threshold:g}; {len(wanted)} of them have a match at or above it (the full scan's)\n"
    )
    rows = [
        ["full scan (baseline: rapidfuzz.process.extract over every source)", full_ms, *recall(full, full, wanted)],
        ["bigram index, a job's sentences together (the worker)", batch_ms, *recall(batched, full, wanted)],
        ["bigram index, one sentence per call", single_ms, *recall(single, full, wanted)],
        ["exact lookup, a job's sentences together (the API)", exact_ms, "-", "-", "-"],
    ]
    headers = ["lookup", "ms per sentence", "a match found", "best within 2 points", "the full scan's best"]
    print(table(headers, rows))
    print(f"\nsuggestions the full scan did not make: {spurious} (none expected: same scorer and threshold)")


def recall(found: list[list[dict]], full: list[list[dict]], wanted: list[int]) -> list[str]:
    """Of the queries the full scan finds a match for: how many got one, one within 2 points of its best, its best."""
    got = [found[i][0]["score"] if found[i] else -1.0 for i in wanted]
    best = [full[i][0]["score"] for i in wanted]
    return [
        f"{sum(g >= 0 for g in got)}/{len(wanted)}",
        f"{sum(g >= b - 2 for g, b in zip(got, best))}/{len(wanted)}",
        f"{sum(g == b for g, b in zip(got, best))}/{len(wanted)}",
    ]


if __name__ == "__main__":
    main()

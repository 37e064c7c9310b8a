"""Glossaries and the sentence cache: keying a glossary's translations by its digest against bypassing the cache.

Requests of a few sentences drawn (seeded) from a small set of distinct sentences, so sentences repeat, half of
the requests with a glossary whose terms match some of them, run against a private Redis cache and the shipped
copy model (int8, as a worker runs it). A sentence no term matches always uses the plain cache. A sentence a
term matches is, under `keyed`, looked up and stored in the glossary's own namespace (shared.store.sentence_cache.
glossary_namespace), under `bypass`, always translated. Two workloads: one glossary shared by every request
that has one (a stored glossary), and a new glossary per request (the worst case for keying: its entries are
never read again). The baseline of the same run: the same requests without any glossary. One torch thread.

    python -m bench.glossary [WORKLOAD] [--requests 200] [--distinct 40] [--per-request 4] [--rounds 3]
"""

from __future__ import annotations

import collections
import logging
import os
import random
import statistics
import time
from dataclasses import dataclass, field

from bench.common import arguments, load_workload, machine, parse, percentile, table
from devstack.redis_server import RedisServer
from shared.settings import Settings
from shared.store.keys import Keys
from shared.store.redis_client import cache_redis
from shared.store.sentence_cache import SentenceCache, glossary_namespace
from shared.text.glossary import Glossary
from shared.text.term_protection import translate_with_glossary
from worker.translation.model.offline_model import COPY_MODEL, DATA

log = logging.getLogger("bench.glossary")
NAMESPACE = "bench"


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    sentences: int = 0
    hits: int = 0
    translated: int = 0
    glossary_sentences: int = 0
    glossary_hits: int = 0


def glossary_terms(sentences: list[str], count: int) -> dict[str, str]:
    """The `count` commonest two-character Chinese words of the sentences, each to a Latin target."""
    bigrams = collections.Counter(
        s[i : i + 2]
        for s in sentences
        for i in range(len(s) - 1)
        if all("\u4e00" <= c <= "\u9fff" for c in s[i : i + 2])
    )
    return {term: f"T{n}" for n, (term, _) in enumerate(bigrams.most_common(count))}


def serve(cache, engine, requests_, strategy: str) -> Tally:
    """Answer each request as the worker would: the cache, then the model for the misses, then store them."""
    from worker.translation.model.text_batches import translate_texts

    tally = Tally()

    def model(texts: list[str]) -> list[str]:
        return translate_texts(engine, texts)

    for sentences, glossary in requests_:
        started = time.perf_counter()
        matched = [bool(glossary and glossary.matches(s)) for s in sentences]
        own = glossary_namespace(NAMESPACE, glossary.digest) if glossary else NAMESPACE
        namespaces = [own if m else NAMESPACE for m in matched]
        looked_up = [i for i, m in enumerate(matched) if not (m and strategy == "bypass")]
        found = dict(
            zip(looked_up, cache.get_each([namespaces[i] for i in looked_up], [sentences[i] for i in looked_up]))
        )
        plain = [sentences[i] for i, m in enumerate(matched) if not m and found.get(i) is None]
        special = [sentences[i] for i, m in enumerate(matched) if m and found.get(i) is None]
        if plain:
            cache.put_many(NAMESPACE, dict(zip(plain, model(plain))))
        if special:
            translations = translate_with_glossary(model, special, glossary)
            if strategy == "keyed":
                cache.put_many(own, dict(zip(special, translations)))
        tally.latencies.append(time.perf_counter() - started)
        tally.sentences += len(sentences)
        tally.hits += sum(found.get(i) is not None for i in range(len(sentences)))
        tally.translated += len(plain) + len(special)
        tally.glossary_sentences += sum(matched)
        tally.glossary_hits += sum(found.get(i) is not None for i, m in enumerate(matched) if m)
    return tally


def main() -> None:
    parser = arguments(__doc__, workload="optional")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--distinct", type=int, default=40, help="distinct sentences the requests draw from")
    parser.add_argument("--per-request", type=int, default=4, help="sentences per request")
    parser.add_argument("--terms", type=int, default=12, help="terms of each glossary")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each row, alternating; medians shown")
    args = parse(parser)
    from worker.translation.model.engine import TranslationEngine

    distinct = load_workload(args.workload or str(DATA / "zh_sentences.txt"), args.distinct)
    terms = glossary_terms(distinct, args.terms)
    shared_glossary = Glossary.of(terms)
    rng = random.Random(7)
    drawn = [rng.sample(distinct, args.per_request) for _ in range(args.requests)]
    with_glossary = [i % 2 == 0 for i in range(args.requests)]
    own_glossaries = [Glossary.of({**terms, f"第{i}号": f"No. {i}"}) for i in range(args.requests)]
    workloads = {
        "no glossary (baseline)": [(s, None) for s in drawn],
        "one shared glossary": [(s, shared_glossary if g else None) for s, g in zip(drawn, with_glossary)],
        "a new glossary per request": [
            (s, own if g else None) for s, g, own in zip(drawn, with_glossary, own_glossaries)
        ],
    }
    rows_to_run = [("no glossary (baseline)", "-")] + [(w, s) for w in list(workloads)[1:] for s in ("keyed", "bypass")]
    with RedisServer(policy="allkeys-lru") as server:
        # One torch thread: on a shared machine two threads spin against the other load (10x slower here).
        settings = Settings(cache_url=server.url, redis_url=server.url, model=str(COPY_MODEL), torch_threads=1)
        client = cache_redis(settings)
        cache = SentenceCache(client, Keys(), settings.cache_ttl)
        engine = TranslationEngine(settings)
        results: dict[tuple[str, str], list[tuple[Tally, int]]] = collections.defaultdict(list)
        for round_ in range(args.rounds):
            for workload, strategy in rows_to_run:
                client.flushdb()
                tally = serve(cache, engine, workloads[workload], "keyed" if strategy == "-" else strategy)
                results[(workload, strategy)].append((tally, client.dbsize()))
                log.info("round %d %s / %s: %.2f s", round_ + 1, workload, strategy, sum(tally.latencies))
    baseline = statistics.median(statistics.mean(t.latencies) for t, _ in results[rows_to_run[0]])
    rows = []
    for workload, strategy in rows_to_run:
        runs = results[(workload, strategy)]
        first = runs[0][0]
        mean = statistics.median(statistics.mean(t.latencies) for t, _ in runs)
        p95 = statistics.median(percentile(t.latencies, 95) for t, _ in runs)
        glossary_share = f"{first.glossary_hits}/{first.glossary_sentences}" if first.glossary_sentences else "-"
        rows.append(
            [
                workload,
                strategy,
                f"{first.hits / first.sentences:.1%}",
                glossary_share,
                first.translated,
                mean * 1000,
                p95 * 1000,
                mean / baseline,
                runs[0][1],
            ]
        )
    print(
        f"\n{args.requests} requests of {args.per_request} sentences from {args.distinct} distinct, every other one "
        f"with a glossary of {args.terms} terms; copy model, int8; medians of {args.rounds} alternating rounds; "
        f"{machine()}; load average {os.getloadavg()[0]:.1f}\n"
    )
    headers = [
        "workload",
        "cache",
        "hit rate",
        "glossary hits",
        "translated",
        "mean ms/request",
        "p95 ms",
        "÷ baseline",
        "cache keys",
    ]
    print(table(headers, rows))


if __name__ == "__main__":
    main()

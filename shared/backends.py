"""The Redis clients and the stores built on them, made in one place for the API, the document stage and the
worker: the broker's client (jobs, documents, statistics, the worker registry) and the cache's (sentences)."""

from __future__ import annotations

from dataclasses import dataclass

import redis

from shared.cache import SentenceCache
from shared.document_store import DocumentStore
from shared.glossary_store import GlossaryStore
from shared.jobs import JobStore
from shared.keys import Keys
from shared.quota import CharacterQuota
from shared.redis_client import broker_redis, cache_redis
from shared.settings import Settings
from shared.stats import Stats
from shared.workers import WorkerRegistry


@dataclass(frozen=True)
class Backends:
    settings: Settings
    keys: Keys
    redis: redis.Redis  # the broker's client, decoding responses
    store: JobStore
    documents: DocumentStore
    cache: SentenceCache
    stats: Stats
    registry: WorkerRegistry
    quota: CharacterQuota  # characters per client per day and month
    glossaries: GlossaryStore  # stored glossaries, by API key

    @classmethod
    def connect(cls, settings: Settings) -> Backends:
        """Clients and stores for `settings` (no connection is made until the first command)."""
        keys = Keys(settings.key_prefix)
        client = broker_redis(settings)
        return cls(
            settings=settings,
            keys=keys,
            redis=client,
            store=JobStore(client, keys, settings.job_ttl, settings.result_ttl),
            documents=DocumentStore(settings, keys),
            cache=SentenceCache(cache_redis(settings), keys, settings.cache_ttl),
            stats=Stats(client, keys),
            registry=WorkerRegistry(client, keys, ttl_seconds=settings.worker_silence_seconds),
            quota=CharacterQuota(client, keys, settings),
            glossaries=GlossaryStore(client, keys, settings.glossary_max_stored),
        )

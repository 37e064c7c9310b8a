"""The Redis clients and the stores built on them, made once per process, in one place, for the API, the
document stage and the worker: the broker's one client (jobs, the workers' claims on them, documents,
statistics, the worker registry, quotas, glossaries, translation memories) and the cache's (sentences); and, for the API and the
document stage, the served routes and a producer of tasks (Services)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import redis
from celery import Celery

from shared.celery_factory import make_celery
from shared.routing.route_table import RouteTable
from shared.routing.routes import route_for
from shared.settings import Settings
from shared.store.document_store import DocumentStore
from shared.store.glossary_store import GlossaryStore
from shared.store.job_claims import JobClaims
from shared.store.jobs import JobStore
from shared.store.keys import Keys
from shared.store.memory_store import MemoryStore
from shared.store.quota import CharacterQuota
from shared.store.redis_client import broker_redis, cache_redis
from shared.store.sentence_cache import SentenceCache
from shared.store.stats import Stats
from shared.store.workers import WorkerRegistry


@dataclass(frozen=True)
class Backends:
    settings: Settings
    keys: Keys
    redis: redis.Redis  # the broker's client, decoding responses
    store: JobStore
    job_claims: JobClaims  # the workers'
    documents: DocumentStore
    cache: SentenceCache
    stats: Stats
    registry: WorkerRegistry
    quota: CharacterQuota  # characters per client per day and month
    glossaries: GlossaryStore  # stored glossaries, by client (API key, else address)
    memories: MemoryStore  # translation memories, by client

    @classmethod
    def connect(cls, settings: Settings, **more: Any) -> Any:
        """Clients and stores for `settings` (no connection is made until the first command); `more` are a
        subclass's own fields."""
        keys = Keys(settings.key_prefix)
        client = broker_redis(settings)
        return cls(
            settings=settings,
            keys=keys,
            redis=client,
            store=JobStore(client, keys, settings.job_ttl, settings.result_ttl),
            job_claims=JobClaims(client, keys, settings.job_ttl, settings.result_ttl),
            documents=DocumentStore(client, keys, settings),
            cache=SentenceCache(cache_redis(settings), keys, settings.cache_ttl),
            stats=Stats(client, keys),
            registry=WorkerRegistry(client, keys, ttl_seconds=settings.worker_silence_seconds),
            quota=CharacterQuota(client, keys, settings),
            glossaries=GlossaryStore(client, keys, settings),
            memories=MemoryStore(client, keys, settings),
            **more,
        )


@dataclass(frozen=True)
class Services(Backends):
    """What the API and the document stage use: the stores, the routes served and a Celery producer."""

    celery: Celery

    @classmethod
    def start(cls, settings: Settings, celery: Celery | None = None, name: str = "transq-api") -> Services:
        return cls.connect(settings, celery=celery or make_celery(settings, name=name))  # type: ignore[no-any-return]

    @cached_property
    def routes(self) -> RouteTable:
        return RouteTable(self.registry, route_for(self.settings), self.settings.default_pair)

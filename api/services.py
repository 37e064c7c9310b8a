"""What the API's views use: the job store, the cache, the registry and the Celery producer."""

from __future__ import annotations

import time

from celery import Celery

from shared.cache import SentenceCache
from shared.celery_factory import make_celery
from shared.jobs import JobStore
from shared.keys import Keys
from shared.redis_client import broker_redis, cache_redis
from shared.settings import Settings
from shared.stats import Stats
from shared.workers import WorkerRegistry


class Services:
    """Created once per API process by create_app() and kept in app.extensions["transq"]."""

    def __init__(self, settings: Settings, celery: Celery | None = None):
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self.redis = broker_redis(settings)
        self.store = JobStore(self.redis, self.keys, settings.job_ttl, settings.result_ttl)
        self.cache = SentenceCache(cache_redis(settings), self.keys, settings.cache_ttl)
        self.registry = WorkerRegistry(self.redis, self.keys, ttl_seconds=settings.heartbeat_seconds * 3)
        self.stats = Stats(self.redis, self.keys)
        self.celery = celery or make_celery(settings, name="transq-api")
        self._namespace: tuple[float, str | None] = (0.0, None)

    def cache_namespace(self) -> str | None:
        """The namespace the workers publish for this model, remembered for two seconds."""
        fetched_at, namespace = self._namespace
        if time.monotonic() - fetched_at > 2.0:
            namespace = self.registry.cache_namespace(self.settings.model)
            self._namespace = (time.monotonic(), namespace)
        return namespace

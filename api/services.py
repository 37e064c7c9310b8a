"""What the API's views use: the job store, the cache, the registry and the Celery producer."""

from __future__ import annotations

from celery import Celery

from api.routing import RouteTable
from shared.cache import SentenceCache
from shared.celery_factory import make_celery
from shared.document_store import DocumentStore
from shared.jobs import JobStore
from shared.keys import Keys
from shared.redis_client import broker_redis, cache_redis
from shared.routes import route_for
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
        self.documents = DocumentStore(settings, self.keys)
        self.cache = SentenceCache(cache_redis(settings), self.keys, settings.cache_ttl)
        self.registry = WorkerRegistry(self.redis, self.keys, ttl_seconds=settings.heartbeat_seconds * 3)
        self.stats = Stats(self.redis, self.keys)
        self.celery = celery or make_celery(settings, name="transq-api")
        self.routes = RouteTable(self.registry, route_for(settings), settings.default_pair)

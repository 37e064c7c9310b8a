"""What the API's views use: the job store, the cache, the registry and the Celery producer."""

from __future__ import annotations

from celery import Celery

from api.routing import RouteTable
from shared.backends import Backends
from shared.celery_factory import make_celery
from shared.routes import route_for
from shared.settings import Settings


class Services:
    """Created once per API process by create_app() and kept in app.extensions["transq"]."""

    def __init__(self, settings: Settings, celery: Celery | None = None):
        self.settings = settings
        backends = Backends.connect(settings)
        self.keys, self.redis, self.store = backends.keys, backends.redis, backends.store
        self.documents, self.cache, self.registry, self.stats = (
            backends.documents,
            backends.cache,
            backends.registry,
            backends.stats,
        )
        self.quota, self.glossaries = backends.quota, backends.glossaries
        self.celery = celery or make_celery(settings, name="transq-api")
        self.routes = RouteTable(self.registry, route_for(settings), settings.default_pair)

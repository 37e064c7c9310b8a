"""What a worker process holds: settings, the broker's services (the job store, which waits out outages,
the cache, statistics, the registry), its id, its claims, its activity, and the model."""

from __future__ import annotations

import logging
from functools import cached_property
from typing import TYPE_CHECKING

from shared.memory import probe_memory
from shared.routing.routes import route_for
from shared.settings import Settings
from shared.store.backends import Backends
from shared.store.sentence_cache import namespace_for
from worker.translation.liveness.activity import Activity
from worker.translation.liveness.broker_health import BrokerHealth, RetryingStore
from worker.translation.liveness.heartbeat import Heartbeat
from worker.translation.liveness.wakeups import Wakeups
from worker.translation.liveness.worker_id import new_worker_id
from worker.translation.round.claims import Claims

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine

log = logging.getLogger(__name__)


class WorkerContext:
    """Created once per worker process; the model is loaded on first use or by `load_model()`."""

    def __init__(self, settings: Settings):
        self.settings = settings
        backends = Backends.connect(settings)
        self.keys, self.redis = backends.keys, backends.redis
        self.documents = backends.documents  # a document job, once translated, is rendered by the document stage
        self.cache, self.stats, self.registry = backends.cache, backends.stats, backends.registry
        self.broker = BrokerHealth()
        self.store = RetryingStore(backends.store, self.broker)
        self.worker_id = new_worker_id()
        self.route = route_for(settings)
        self.claims = Claims(self)
        self.activity = Activity()
        self.wakeups = Wakeups(settings, self.keys, self.route)
        self.heartbeat = Heartbeat(self)

    @cached_property
    def engine(self) -> TranslationEngine:
        from worker.translation.model.engine import TranslationEngine  # torch is imported here, in the worker only

        memory = probe_memory(self.settings.cgroup_root)
        log.info(
            "memory limit %.0f MiB (%s), in use %.0f MiB",
            memory.limit_bytes / 2**20,
            memory.source,
            memory.used_bytes / 2**20,
        )
        return TranslationEngine(self.settings)

    @cached_property
    def namespace(self) -> str:
        return namespace_for(self.engine.identity)

    def load_model(self) -> None:
        """Load the model and run one short batch, so the first job does not pay the warm-up."""
        self.engine.warm_up()
        _ = self.namespace

    def start_heartbeat(self) -> None:
        from worker.translation.model.engine import describe

        self.heartbeat.start(describe(self.engine))

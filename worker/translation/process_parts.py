"""What a worker process holds for its life, made once in that process (ProcessParts): settings, the
broker's clients and stores (shared.store.backends.Backends), the job store as the worker uses it (waiting
out outages), its id and route, its claims, its activity, its outgoing messages, the model, and the parts
built on them: the round (worker.translation.round) and the heartbeat (worker.translation.liveness). Each part
is handed the parts it uses; nothing takes this object whole but the process's own modules (the task and the
Celery app's signal handlers)."""

from __future__ import annotations

import logging
import os
from functools import cached_property
from typing import TYPE_CHECKING

from shared.memory import probe_memory
from shared.routing.routes import route_for
from shared.settings import Settings
from shared.store.backends import Backends
from shared.store.sentence_cache import namespace_for
from shared.text.protected_spans import VERSION as SPANS_VERSION
from worker.translation.liveness.activity import Activity
from worker.translation.liveness.broker_health import BrokerHealth, RetryingClaims, RetryingStore
from worker.translation.liveness.consumer_watch import ConsumerWatch
from worker.translation.liveness.heartbeat import Heartbeat
from worker.translation.liveness.wakeups import Sweeps, Wakeups
from worker.translation.liveness.worker_id import new_worker_id
from worker.translation.round.batch_runner import PassRunner
from worker.translation.round.claims import Claims
from worker.translation.round.job_outcomes import Outcomes
from worker.translation.round.job_work import WorkLoader
from worker.translation.round.rounds import Rounds

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine

log = logging.getLogger(__name__)


class ProcessParts:
    """Made once per process (PerProcess): connects nothing until a part first talks to the broker, and
    loads the model on first use of the engine (or by `load_model()`, in a pool process before it takes work;
    the main process, which only stores hard timeouts, never loads it)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.backends = Backends.connect(settings)
        self.broker = BrokerHealth()
        self.store = RetryingStore(self.backends.store, self.broker)
        self.job_claims = RetryingClaims(self.backends.job_claims, self.broker)
        self.worker_id = new_worker_id()
        self.route = route_for(settings)
        self.activity = Activity()
        self.wakeups = Wakeups(settings, self.backends.keys, self.route)
        self.claims = Claims(
            self.job_claims,
            self.store,
            self.broker,
            self.route.key,
            self.worker_id,
            settings.lease_seconds,
            settings.max_deliveries,
        )
        # A document job, once translated, is rendered by the document stage (`wakeups`).
        self.outcomes = Outcomes(self.store, self.claims, self.backends.stats, self.wakeups)
        self.heartbeat: Heartbeat | None = None

    @cached_property
    def engine(self) -> TranslationEngine:
        # torch is imported here, in a pool process only: the main process never pays for it (celery_app);
        # OpenMP's spin-wait is bounded first (libgomp reads its environment once, as torch loads it)
        from worker.translation.model.cpu_threads import prepare_openmp

        prepare_openmp()
        from worker.translation.model.engine import TranslationEngine

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
        """The sentence-cache namespace of this model's translations."""
        spans = {"protected_spans": SPANS_VERSION} if self.settings.protect_spans else {}  # they translate apart
        return namespace_for({**self.engine.identity, **spans})

    @cached_property
    def loader(self) -> WorkLoader:
        return WorkLoader(
            self.store,
            self.claims,
            self.backends.cache,
            self.namespace,
            self.backends.stats,
            self.settings.max_sentence_chars,
            self.settings.min_confidence,
            (self.route.source, self.route.target),
            memories=self.backends.memories,
            fuzzy_max_sentences=self.settings.memory_fuzzy_max_sentences,
        )

    @cached_property
    def passes(self) -> PassRunner:
        return PassRunner(
            self.settings, self.engine, self.backends.cache, self.namespace, self.store, self.claims, self.outcomes
        )

    @cached_property
    def rounds(self) -> Rounds:
        return Rounds(
            self.settings,
            self.claims,
            self.loader,
            self.passes,
            self.outcomes,
            self.broker,
            self.activity,
        )

    @cached_property
    def sweeps(self) -> Sweeps:
        return Sweeps(
            self.job_claims.once,
            self.broker,
            self.wakeups,
            self.backends.stats,
            self.activity,
            self.route.key,
            self.settings.lease_seconds,
        )

    def load_model(self) -> None:
        """Load the model and run one short batch, so the first job does not pay the warm-up."""
        self.engine.warm_up()
        _ = self.namespace

    def start_heartbeat(self) -> None:
        """Once the model is loaded: beat, sweep the route, watch the consumer (worker.translation.liveness)."""
        from worker.translation.model.engine import describe  # loaded with the engine already

        watch = ConsumerWatch(
            self.backends.redis, self.backends.keys.queue(self.route.key), self.broker, self.settings.lease_seconds
        )
        self.heartbeat = Heartbeat(
            self.settings,
            self.backends.registry,
            self.worker_id,
            self.route,
            self.namespace,
            self.activity,
            self.broker,
            self.sweeps,
            watch,
        )
        self.heartbeat.start(describe(self.engine))

    def stop_heartbeat(self) -> None:
        """The process leaves: the registry forgets it (worker_process_shutdown)."""
        if self.heartbeat is not None:
            self.heartbeat.stop()


class PerProcess:
    """A process's one ProcessParts, made on first use in that process. A pool process forked after the main
    process made its own (to store a hard timeout) makes its own too: its worker id names its own pid."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._made: ProcessParts | None = None
        self._pid = 0

    def get(self) -> ProcessParts:
        if self._made is None or self._pid != os.getpid():
            self._made, self._pid = ProcessParts(self.settings), os.getpid()
        return self._made

    @property
    def made(self) -> ProcessParts | None:
        """This process's parts, if it made them."""
        return self._made if self._pid == os.getpid() else None

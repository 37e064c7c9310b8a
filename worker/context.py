"""What a worker process holds: settings, Redis clients, the job store, the cache, the model."""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from functools import cached_property

from shared.cache import SentenceCache, namespace_for
from shared.jobs import JobStore
from shared.keys import Keys
from shared.memory import probe_memory
from shared.redis_client import broker_redis, cache_redis
from shared.settings import Settings
from shared.stats import Stats
from shared.workers import WorkerRegistry

log = logging.getLogger(__name__)
WORKER_ID_FILE = os.environ.get("TRANSQ_WORKER_ID_FILE", "/tmp/transq-worker-id")


class WorkerContext:
    """Created once per worker process; the model is loaded on first use or by `load_model()`."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self.redis = broker_redis(settings)
        self.store = JobStore(self.redis, self.keys, settings.job_ttl, settings.result_ttl)
        self.cache = SentenceCache(cache_redis(settings), self.keys, settings.cache_ttl)
        self.stats = Stats(self.redis, self.keys)
        self.registry = WorkerRegistry(self.redis, self.keys, ttl_seconds=settings.heartbeat_seconds * 3)
        # Host and pid alone can repeat (containers on the host network share a hostname and may share pids).
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._heartbeat_stop = threading.Event()

    @cached_property
    def engine(self):  # type: ignore[no-untyped-def]
        from worker.engine import TranslationEngine  # torch is imported here, in the worker only

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
        """Report readiness (model loaded) every few seconds from a background thread."""
        from worker.engine import describe

        info = describe(self.engine)
        info["pid"] = os.getpid()
        try:  # for the container healthcheck: which heartbeat is this container's
            with open(WORKER_ID_FILE, "w") as handle:
                handle.write(self.worker_id)
        except OSError as exc:
            log.warning("cannot write %s: %s", WORKER_ID_FILE, exc)

        def beat() -> None:
            while True:
                try:
                    self.registry.beat(self.worker_id, info, self.settings.model, self.namespace)
                except Exception as exc:  # noqa: BLE001 - keep beating through broker outages
                    log.warning("heartbeat failed: %s", exc)
                if self._heartbeat_stop.wait(self.settings.heartbeat_seconds):
                    return

        threading.Thread(target=beat, name="heartbeat", daemon=True).start()

    def stop_heartbeat(self) -> None:
        self._heartbeat_stop.set()
        try:
            self.registry.leave(self.worker_id)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not deregister: %s", exc)

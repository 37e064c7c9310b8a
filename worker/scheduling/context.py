"""What a worker process holds: settings, Redis clients, the job store, the cache, the model."""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from contextlib import contextmanager
from functools import cached_property
from typing import Iterator

from celery import Celery

from shared.backends import Backends
from shared.cache import namespace_for
from shared.celery_factory import DOCUMENT_TASK, TRANSLATE_TASK, make_celery
from shared.job_status import ClaimOutcome
from shared.jobs import Claim
from shared.memory import probe_memory
from shared.routes import route_for
from shared.settings import Settings
from worker.scheduling.broker_health import BrokerHealth
from worker.scheduling.consumer_watch import ConsumerWatch
from worker.scheduling.container import host_and_container

log = logging.getLogger(__name__)
_SEND_RETRY = {"max_retries": 5, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 2}
WORKER_ID_FILE = os.environ.get("TRANSQ_WORKER_ID_FILE", "/tmp/transq-worker-id")


class WorkerContext:
    """Created once per worker process; the model is loaded on first use or by `load_model()`."""

    def __init__(self, settings: Settings):
        self.settings = settings
        backends = Backends.connect(settings)
        self.keys, self.redis, self.store = backends.keys, backends.redis, backends.store
        self.documents = backends.documents  # a document job, once translated, is rendered by the document stage
        self.cache, self.stats, self.registry = backends.cache, backends.stats, backends.registry
        # Host and pid alone can repeat (containers on the host network share a hostname and may share pids):
        # the container id and a random suffix tell them apart.
        self.worker_id = f"{host_and_container()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._heartbeat_stop = threading.Event()
        self.broker = BrokerHealth()
        self.route = route_for(settings)
        self._rounds_running = 0
        self.running_jobs = 0  # jobs of the running round (worker.scheduling.leases.LeaseKeeper), in the heartbeat
        self._idle_since = time.monotonic()
        # The fence of each job this process claimed in its current round: its writes for the job carry it.
        self.fences: dict[str, int] = {}

    @contextmanager
    def round_running(self) -> Iterator[None]:
        """Marks this process busy (it sends no wake-ups for waiting jobs meanwhile)."""
        self._rounds_running += 1
        self.fences = {}  # the last round's claims are over (rounds run one at a time)
        try:
            yield
        finally:
            self._rounds_running -= 1
            self._idle_since = time.monotonic()

    def claim(self, job_id: str, fresh_only: bool = False) -> Claim:
        """Try to take a job of this worker's route (see JobStore.claim); a claimed job's fence is kept."""
        settings = self.settings
        claim = self.store.claim(
            job_id,
            self.route.key,
            self.worker_id,
            settings.lease_seconds,
            settings.max_deliveries,
            fresh_only=fresh_only,
            lapse_is_loss=self.lapse_is_loss(),
        )
        if claim.outcome == ClaimOutcome.CLAIMED:
            self.fences[job_id] = claim.fence
        return claim

    def waiting(self) -> int:
        """Jobs waiting in this worker's route."""
        return self.store.pending_count(self.route.key)

    def lapse_is_loss(self) -> bool:
        """Whether a running job whose lease lapsed counts as lost now: not within two leases of a broker
        outage this process saw (its holder may be alive, its lease expired during the outage)."""
        return not self.broker.troubled_within(2 * self.settings.lease_seconds)

    @cached_property
    def engine(self):  # type: ignore[no-untyped-def]
        from worker.model.engine import TranslationEngine  # torch is imported here, in the worker only

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

    @cached_property
    def _producer(self) -> Celery:
        return make_celery(self.settings, name="transq-worker-wake")

    def send_to_document_stage(self, job_id: str) -> None:
        """A translated document job goes to the document stage to be rendered (api.documents.stage)."""
        self._producer.send_task(
            DOCUMENT_TASK, args=[job_id], queue=self.keys.documents_queue, retry=True, retry_policy=_SEND_RETRY
        )

    def wake(self, job_id: str) -> None:
        """Send a new wake-up message for a job (it queues behind the messages already waiting)."""
        self._producer.send_task(TRANSLATE_TASK, args=[job_id], queue=self.keys.queue(self.route.key))

    def wake_forgotten_jobs(self) -> int:
        """Re-send the wake-up of jobs that have waited two leases while this worker sat idle as long.

        A queued job's message can be lost: a consumer took it while the broker was full (kombu could not
        record it as unacknowledged), or the API died between storing the job and sending it. The job
        would then wait for another job's round forever. A duplicate wake-up is harmless (the job is
        claimed once), and the wake key lets one worker of the fleet send it per job and lease period."""
        stale = 2 * self.settings.lease_seconds
        if self._rounds_running or time.monotonic() - self._idle_since < stale:
            return 0
        sent = 0
        for job_id in self.store.waiting_since(self.route.key, time.time() - stale, limit=8):
            if self.store.mark_woken(job_id, max(1, int(stale))):
                log.warning("job %s waited %.0fs with this worker idle: sending its wake-up again", job_id, stale)
                self.wake(job_id)
                sent += 1
        return sent

    def wake_lapsed_jobs(self) -> int:
        """Send a wake-up for each running job of this route whose lease lapsed: its worker died, stalled or
        was cut off. Its own message is unacknowledged at that worker, and the broker gives it back only
        after TRANSQ_VISIBILITY_TIMEOUT; with a wake-up any live worker claims the job now (a lost delivery,
        counted in its attempts), and the claim's new fence makes the old worker's late writes be refused.
        Every worker sweeps, busy or idle; the wake key lets one send it per job. None within two leases of a
        broker outage this process saw (the holders may be alive: they take their leases back)."""
        if not self.lapse_is_loss():
            return 0
        sent = 0
        for job_id in self.store.lapsed(self.route.key, limit=16):
            if self.store.mark_woken(job_id, max(1, int(2 * self.settings.lease_seconds))):
                log.warning("job %s: its worker's lease lapsed, waking it for another worker", job_id)
                self.stats.incr("leases_lapsed")
                self.wake(job_id)
                sent += 1
        return sent

    def start_heartbeat(self) -> None:
        """Report readiness (model loaded) and whether a round runs (for the API's per-route gauges, which
        autoscalers read) every few seconds from a background thread, wake running jobs whose lease lapsed,
        and re-send the wake-ups of forgotten waiting jobs; give up when the consumer no longer consumes
        (worker.scheduling.consumer_watch)."""
        from worker.model.engine import describe

        info = describe(self.engine)
        info["pid"] = os.getpid()
        try:  # for the container healthcheck: which heartbeat is this container's
            with open(WORKER_ID_FILE, "w") as handle:
                handle.write(self.worker_id)
        except OSError as exc:
            log.warning("cannot write %s: %s", WORKER_ID_FILE, exc)

        watch = ConsumerWatch(self)

        def beat() -> None:
            while True:
                try:
                    now = {**info, "busy": self._rounds_running > 0, "running_jobs": self.running_jobs}
                    self.registry.beat(self.worker_id, now, self.route, self.namespace)
                    self.wake_lapsed_jobs()
                    self.wake_forgotten_jobs()
                    if watch.stalled(self._idle_since, self._rounds_running > 0):
                        self.stop_heartbeat()  # the health check fails from now on
                        watch.give_up()
                        return
                except Exception as exc:  # noqa: BLE001 - keep beating through broker outages
                    self.broker.saw_trouble()
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

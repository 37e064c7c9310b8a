"""Waking jobs: the messages a worker sends (a new wake-up for a waiting job, which queues behind the messages
already waiting, and a translated document job to the document stage, worker.documents.stage), and the
heartbeat's sweeps of its route that send wake-ups again.

The sweeps: wake-ups for running jobs whose lease lapsed, and again for waiting jobs whose wake-up was lost. A
duplicate wake-up is harmless (the job is claimed once), and the wake key lets one worker of the fleet send it
per job and lease period. Both ask the broker once: the heartbeat answers a failure."""

from __future__ import annotations

import logging
import time
from functools import cached_property

from celery import Celery

from shared.celery_factory import DOCUMENT_TASK, TRANSLATE_TASK, make_celery
from shared.routing.routes import Route
from shared.settings import Settings
from shared.store.job_claims import JobClaims
from shared.store.keys import Keys
from shared.store.stats import Stats
from worker.translation.liveness.activity import Activity
from worker.translation.liveness.broker_health import BrokerHealth

log = logging.getLogger(__name__)

_SEND_RETRY = {"max_retries": 5, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 2}

# The most jobs one sweep wakes (the next heartbeat takes the rest).
LAPSED_PER_SWEEP = 16
FORGOTTEN_PER_SWEEP = 8


class Wakeups:
    def __init__(self, settings: Settings, keys: Keys, route: Route):
        self.settings, self.keys, self.route = settings, keys, route
        # Two leases: how long one sender holds a job's wake key (JobClaims.mark_woken) so that no other sends
        # it a wake-up meanwhile.
        self.period = 2 * settings.lease_seconds
        self.key_seconds = max(1, int(self.period))

    @cached_property
    def _producer(self) -> Celery:  # made on the first message: a worker that sends none connects nothing
        return make_celery(self.settings, name="transq-worker-wake")

    def wake(self, job_id: str) -> None:
        self._producer.send_task(TRANSLATE_TASK, args=[job_id], queue=self.keys.queue(self.route.key))

    def send_to_document_stage(self, job_id: str) -> None:
        self._producer.send_task(
            DOCUMENT_TASK, args=[job_id], queue=self.keys.documents_queue, retry=True, retry_policy=_SEND_RETRY
        )


class Sweeps:
    """The heartbeat's sweeps of this worker's route (`store`, the claims store, is asked once: see
    RetryingClaims.once)."""

    def __init__(
        self,
        store: JobClaims,
        broker: BrokerHealth,
        wakeups: Wakeups,
        stats: Stats,
        activity: Activity,
        route_key: str,
        lease_seconds: float,
    ):
        self.store, self.broker, self.wakeups, self.stats = store, broker, wakeups, stats
        self.activity, self.route_key, self.lease_seconds = activity, route_key, lease_seconds

    def wake_lapsed_jobs(self) -> int:
        """Send a wake-up for each running job of this route whose lease lapsed: its worker died, stalled or
        was cut off. Its own message is unacknowledged at that worker, and the broker gives it back only after
        TRANSQ_VISIBILITY_TIMEOUT; with a wake-up any live worker claims the job now (a lost delivery, counted
        in its attempts), and the claim's new fence makes the old worker's late writes be refused. Every worker
        sweeps, busy or idle. None within two leases of a broker outage this process saw (the holders may be
        alive: they take their leases back)."""
        if not self.broker.lapse_is_loss(self.lease_seconds):
            return 0
        sent = 0
        for job_id in self.store.lapsed(self.route_key, limit=LAPSED_PER_SWEEP):
            if self.store.mark_woken(job_id, self.wakeups.key_seconds):
                log.warning("job %s: its worker's lease lapsed, waking it for another worker", job_id)
                self.stats.incr("leases_lapsed")
                self.wakeups.wake(job_id)
                sent += 1
        return sent

    def wake_forgotten_jobs(self) -> int:
        """Re-send the wake-up of jobs that have waited a lease while this worker sat idle a lease and the
        route's queue held no message. A queued job's message can be lost: a consumer took it while the broker
        was full (kombu could not record it as unacknowledged), a retry could not be published, or the API died
        between storing the job and sending it. An idle worker takes a queued message within milliseconds, so
        with none queued a waiting job has no wake-up on its way (or one a busy worker holds: a second one is
        harmless, the job is claimed once). Not gated on this worker's idleness alone: stale messages of
        finished jobs (each a round of a millisecond) kept a worker from ever being idle two leases while a
        job waited unwoken."""
        if self.activity.busy or self.activity.idle_for() < self.lease_seconds:
            return 0
        if self.store.messages_waiting(self.route_key):
            return 0  # an idle worker takes them within milliseconds; their rounds take in waiting jobs
        sent = 0
        waiting = self.store.waiting_since(self.route_key, time.time() - self.lease_seconds, limit=FORGOTTEN_PER_SWEEP)
        for job_id in waiting:
            if self.store.mark_woken(job_id, self.wakeups.key_seconds):
                log.warning(
                    "job %s waited %.0fs with no message for it: sending its wake-up again", job_id, self.lease_seconds
                )
                self.wakeups.wake(job_id)
                sent += 1
        return sent

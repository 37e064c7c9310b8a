"""The heartbeat's sweeps of a worker's route: wake-ups for running jobs whose lease lapsed, and again for
waiting jobs whose wake-up was lost. A duplicate wake-up is harmless (the job is claimed once), and the
wake key lets one worker of the fleet send it per job and lease period. Both ask the broker once: the
heartbeat answers a failure."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from worker.translation.liveness.wakeups import wake_key_seconds, wake_period

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext

log = logging.getLogger(__name__)

# The most jobs one sweep wakes (the next heartbeat takes the rest).
LAPSED_PER_SWEEP = 16
FORGOTTEN_PER_SWEEP = 8


def wake_lapsed_jobs(ctx: WorkerContext) -> int:
    """Send a wake-up for each running job of this route whose lease lapsed: its worker died, stalled or was
    cut off. Its own message is unacknowledged at that worker, and the broker gives it back only after
    TRANSQ_VISIBILITY_TIMEOUT; with a wake-up any live worker claims the job now (a lost delivery, counted in
    its attempts), and the claim's new fence makes the old worker's late writes be refused. Every worker
    sweeps, busy or idle. None within two leases of a broker outage this process saw (the holders may be
    alive: they take their leases back)."""
    if not ctx.claims.lapse_is_loss():
        return 0
    sent = 0
    store = ctx.job_claims.once
    for job_id in store.lapsed(ctx.route.key, limit=LAPSED_PER_SWEEP):
        if store.mark_woken(job_id, wake_key_seconds(ctx.settings)):
            log.warning("job %s: its worker's lease lapsed, waking it for another worker", job_id)
            ctx.stats.incr("leases_lapsed")
            ctx.wakeups.wake(job_id)
            sent += 1
    return sent


def wake_forgotten_jobs(ctx: WorkerContext) -> int:
    """Re-send the wake-up of jobs that have waited two leases while this worker sat idle as long. A queued
    job's message can be lost: a consumer took it while the broker was full (kombu could not record it as
    unacknowledged), or the API died between storing the job and sending it. The job would then wait for
    another job's round forever."""
    stale = wake_period(ctx.settings)
    if ctx.activity.busy or ctx.activity.idle_for() < stale:
        return 0
    sent = 0
    store = ctx.job_claims.once
    for job_id in store.waiting_since(ctx.route.key, time.time() - stale, limit=FORGOTTEN_PER_SWEEP):
        if store.mark_woken(job_id, wake_key_seconds(ctx.settings)):
            log.warning("job %s waited %.0fs with this worker idle: sending its wake-up again", job_id, stale)
            ctx.wakeups.wake(job_id)
            sent += 1
    return sent

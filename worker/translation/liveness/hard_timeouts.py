"""A job whose task was killed at the hard time limit (TRANSQ_TASK_TIME_LIMIT) fails with `timeout`, stored
from Celery's failure callback in the worker's main process, only while the killed pool process's claim
holds (its fence): not when another worker took the job over meanwhile (this one was stopped or cut off
past its lease)."""

from __future__ import annotations

import logging
import threading

import redis

from shared.errors import ErrorCode
from shared.settings import Settings
from shared.store.job_claims import JobClaims
from shared.store.jobs import JobStore
from worker.translation.liveness.broker_health import BrokerHealth
from worker.translation.liveness.worker_id import is_dead_here

log = logging.getLogger(__name__)


def store_timeout(store: JobStore, claims: JobClaims, broker: BrokerHealth, settings: Settings, job_id: str) -> None:
    """Fail the job of a killed task. This must not raise (Celery would then neither acknowledge the message
    nor free the consumer's slot: the worker would never consume again): `store` and `claims` are asked once, and in a
    broker outage (a full broker may be what held the task past its limit) the failure is stored from a
    background thread once the broker takes writes again."""
    message = f"the job ran longer than {settings.task_time_limit}s"

    def write() -> None:
        holder, fence = claims.holder(job_id)
        if is_dead_here(holder):
            store.fail(job_id, ErrorCode.TIMEOUT, message, fence)

    try:
        write()
    except redis.RedisError as exc:
        log.warning("could not store job %s's timeout now (%s): retrying in the background", job_id, exc)

        def retry() -> None:
            try:
                broker.retry(write, grace_seconds=settings.job_ttl)
            except redis.RedisError:
                log.exception("could not store job %s's timeout", job_id)

        threading.Thread(target=retry, name="store-timeout", daemon=True).start()

"""A stored job is accepted (202) only once its message is sent and, with sentinels, a replica holds it; else
it is taken back, so that an answer "not accepted" is true: no such job is kept, queued or run.

When the job store fails mid-submission (a timeout, a reset, a primary that became a replica), the job may be
stored or not: it is taken back, on the primary the sentinels name now when the old one does not answer.
Only when no primary confirms that is the answer a 503 that says so and names the job (a retry with the same
Idempotency-Key then answers that job if it was kept, or makes it once more if it was not). A failed `WAIT`
or a failure with sentinels also drops the pooled connections, so the next attempt asks the sentinels for the
primary (a pooled connection to a primary cut off from its sentinels and replicas kept every submission on it).
"""

from __future__ import annotations

import logging
from typing import NoReturn

import redis
from kombu.exceptions import KombuError, OperationalError

from shared.celery_factory import DOCUMENT_TASK, TRANSLATE_TASK
from shared.errors import Unavailable
from shared.store.backends import Services
from shared.store.job_record import Job
from shared.store.job_status import JobStatus
from shared.store.jobs import Idempotency
from shared.store.replication import rediscover_primary, wait_for_replica

log = logging.getLogger(__name__)
_PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
STORE_FAILURES = (KombuError, OperationalError, redis.RedisError, OSError)


class NotAccepted(Exception):
    """The job was taken back: nothing of it is kept. `retry`: with sentinels, the primary they name after
    rediscover() may take it (worth one retry)."""

    def __init__(self, message: str, retry: bool):
        super().__init__(message)
        self.message, self.retry = message, retry


def accept(services: Services, job: Job, idempotency: Idempotency | None) -> None:
    """Send a stored job's message and wait for a replica; NotAccepted once it is taken back, Unavailable
    naming the job when it could not be (it may be kept)."""
    try:
        if job.status in (JobStatus.QUEUED, JobStatus.PARSING):
            _enqueue(services, job)
    except STORE_FAILURES as exc:
        log.error("could not enqueue job %s: %r", job.id, exc, extra={"job_id": job.id})
        take_back(services, job, idempotency, "the queue is unavailable")
    try:
        replicated = _await_replica(services, job)
    except redis.RedisError as exc:
        log.error("job %s: the job store failed while waiting for a replica: %r", job.id, exc, extra={"job_id": job.id})
        take_back(services, job, idempotency, "the job store failed while waiting for a replica to acknowledge the job")
    if not replicated:
        log.error("no replica acknowledged job %s in time", job.id, extra={"job_id": job.id})
        take_back(services, job, idempotency, "no replica of the job store acknowledged the job in time")


def take_back(services: Services, job: Job, idempotency: Idempotency | None, why: str) -> NoReturn:
    """Remove a job that is not accepted (its key, document and storage too): NotAccepted once a primary
    confirmed it, Unavailable naming the job when none did. With sentinels, a take-back the primary does not
    answer is tried once more on the primary they name now."""
    sentinels = bool(services.settings.redis_sentinels)
    for attempt in range(2 if sentinels else 1):
        if attempt:
            rediscover(services)
        try:
            services.store.delete(job, idempotency.key if idempotency else None)
            break
        except redis.RedisError as exc:
            log.warning("job %s: could not take it back (%r)", job.id, exc, extra={"job_id": job.id})
    else:
        raise Unavailable(
            f"{why}, and the job store did not answer when the job was taken back: job {job.id} may have been "
            f"kept. Repeat the request with the same Idempotency-Key (it answers that job if it was kept), or "
            f"read GET /v1/jobs/{job.id}",
            retry_after=5,
        )
    raise NotAccepted(f"{why}; the job was not accepted", retry=sentinels)


def rediscover(services: Services) -> None:
    """Drop the job store's idle pooled connections and the producer's: the next ones go to the primary the
    sentinels name now (a connection in use is dropped when the next failure comes to it)."""
    rediscover_primary(services.redis)
    pool = services.celery.pool
    if not pool.limit:  # unpooled: every publish connects anew
        return
    idle = []
    try:
        while True:  # every connection no request holds (kombu makes new ones up to the limit)
            idle.append(pool.acquire(block=False))
    except pool.LimitExceeded:
        pass
    for connection in idle:
        connection.collect()  # its transport and channel closed: its next use connects, asking the sentinels
        connection.release()  # back to the pool


def _enqueue(services: Services, job: Job) -> None:
    document = job.status == JobStatus.PARSING
    services.celery.send_task(
        DOCUMENT_TASK if document else TRANSLATE_TASK,
        args=[job.id],
        queue=services.keys.documents_queue if document else services.keys.queue(job.route),
        retry=True,
        retry_policy=_PUBLISH_RETRY,
    )
    log.info(
        "job %s queued%s (%d sentences, %d cached)",
        job.id,
        " for the document stage" if document else "",
        job.sentences_total,
        job.cached_sentences,
        extra={"job_id": job.id},
    )


def _await_replica(services: Services, job: Job) -> bool:
    """With sentinels (so replicas): whether a replica has the job within TRANSQ_REPLICA_WAIT_MS."""
    wait_ms = services.settings.replica_wait_ms
    if not (services.settings.redis_sentinels and wait_ms > 0):
        return True
    return wait_for_replica(services.redis, services.keys, wait_ms) >= 1

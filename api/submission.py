"""Submitting a job: idempotency, the cache fast path, backpressure, then the queue."""

from __future__ import annotations

import hashlib
import logging
import time

import redis
from kombu.exceptions import KombuError, OperationalError

from api.errors import IdempotencyMismatch, Overloaded, Unavailable
from api.services import Services
from api.validation import TranslationRequest
from shared.cache import normalise
from shared.celery_factory import TRANSLATE_TASK
from shared.jobs import QUEUED, SUCCEEDED, Created, Idempotency, Job, new_job_id, utc_now
from shared.replication import wait_for_replica
from shared.routes import Route
from shared.splitter import join_translations

log = logging.getLogger(__name__)
_PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


def submit(
    services: Services,
    request: TranslationRequest,
    idempotency_key: str | None = None,
    client: str = "",
    owner: str = "",
) -> tuple[Job, bool]:
    """Store and enqueue a job, or answer it from the cache. Returns (job, created now).

    `client` scopes the Idempotency-Key; `owner` is stored with the job (only it may read the job)."""
    settings = services.settings
    route = services.routes.choose(request.source_lang, request.target_lang)
    digest = request.digest(route.pair)
    idempotency = None
    if idempotency_key:
        scoped = hashlib.sha256(f"{client}\0{idempotency_key}".encode()).hexdigest()
        idempotency = Idempotency(services.keys.idempotency(scoped), digest, settings.idempotency_ttl)
    job, created = _create(services, new_job_id(), request, route, idempotency, owner)
    if created.outcome == "exists":
        if created.request_digest != digest:
            raise IdempotencyMismatch("this Idempotency-Key was already used with a different request body")
        existing = services.store.get(created.job_id)
        if existing is None:  # expired between the two calls
            raise Unavailable("the job of this Idempotency-Key has just expired; try again", retry_after=1)
        return existing, False
    if created.outcome == "overloaded":
        raise Overloaded(f"the queue holds {settings.max_queue} or more jobs; try again later", retry_after=5)
    if job.status == QUEUED:
        _enqueue(services, job, idempotency)
    _await_replica(services, job, idempotency)
    return job, True


def _create(
    services: Services,
    job_id: str,
    request: TranslationRequest,
    route: Route,
    idempotency: Idempotency | None,
    owner: str,
) -> tuple[Job, Created]:
    """The job record, finished at once when every sentence is cached, stored in one atomic call."""
    settings = services.settings
    namespace = services.routes.cache_namespace(route)
    found = services.cache.get_many(namespace, [normalise(s) for s in request.sentences]) if namespace else []
    hits = sum(t is not None for t in found)
    now = utc_now()
    job = Job(
        id=job_id,
        status=QUEUED,
        texts=request.texts,
        model=route.model,
        created_at=now,
        sentences_total=len(request.sentences),
        sentences_done=hits,  # cached sentences are done: progress starts there
        cached_sentences=hits,
        submitted=time.time(),
        owner=owner,
        route=route.key,
        format=request.format,
        document=request.document,
        filename=request.filename,
        has_document=bool(request.document),
    )
    if hits == len(request.sentences):
        job.status, job.started_at, job.finished_at = SUCCEEDED, now, now
        translations = iter(found)
        job.result = [
            join_translations(segs, [next(translations) for s in segs if s.translate])  # type: ignore[misc]
            for segs in request.segments
        ]
    created = services.store.create(job, idempotency=idempotency, max_queue=settings.max_queue)
    if created.outcome == "created":
        services.stats.add(_counters(hits, len(request.sentences) - hits, fast=job.status == SUCCEEDED))
    return job, created


def _enqueue(services: Services, job: Job, idempotency: Idempotency | None) -> None:
    """Send the job's message; when that fails, remove the job (and its idempotency key) again."""
    try:
        services.celery.send_task(
            TRANSLATE_TASK,
            args=[job.id],
            queue=services.keys.queue(job.route),
            retry=True,
            retry_policy=_PUBLISH_RETRY,
        )
    except (KombuError, OperationalError, redis.RedisError, OSError) as exc:
        log.error("could not enqueue job %s: %s", job.id, exc, extra={"job_id": job.id})
        _forget_job(services, job, idempotency)
        raise Unavailable("the queue is unavailable; the job was not accepted", retry_after=5) from None
    log.info(
        "job %s queued (%d sentences, %d cached)",
        job.id,
        job.sentences_total,
        job.cached_sentences,
        extra={"job_id": job.id},
    )


def _await_replica(services: Services, job: Job, idempotency: Idempotency | None) -> None:
    """With sentinels (so replicas): accept the job only once a replica has it, else take it back (503)."""
    wait_ms = services.settings.replica_wait_ms
    if not (services.settings.redis_sentinels and wait_ms > 0):
        return
    if wait_for_replica(services.redis, services.keys, wait_ms) >= 1:
        return
    log.error("no replica acknowledged job %s within %d ms", job.id, wait_ms, extra={"job_id": job.id})
    _forget_job(services, job, idempotency)
    raise Unavailable("no replica of the job store acknowledged the job in time; it was not accepted", retry_after=5)


def _counters(hits: int, misses: int, fast: bool) -> dict[str, int]:
    counters = {"jobs_submitted": 1, "api_cache_hits": hits, "api_cache_misses": misses}
    if fast:
        counters["jobs_answered_from_cache"] = 1
    return {name: amount for name, amount in counters.items() if amount}


def _forget_job(services: Services, job: Job, idempotency: Idempotency | None) -> None:
    try:
        services.store.delete(job, idempotency.key if idempotency else None)
    except redis.RedisError:
        log.warning("job %s may be left queued without a message", job.id)

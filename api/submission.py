"""Submitting a job: idempotency, the cache fast path, backpressure, then the queue."""

from __future__ import annotations

import hashlib
import logging
import time

import redis
from kombu.exceptions import KombuError, OperationalError

from api.errors import Overloaded, Unavailable
from api.services import Services
from api.validation import TranslationRequest
from shared.cache import normalise
from shared.celery_factory import TRANSLATE_TASK
from shared.jobs import QUEUED, SUCCEEDED, Job, new_job_id, utc_now
from shared.splitter import join_translations

log = logging.getLogger(__name__)
_PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


def submit(
    services: Services, request: TranslationRequest, idempotency_key: str | None = None, client: str = ""
) -> tuple[Job, bool]:
    """Store and enqueue a job, or answer it from the cache. Returns (job, created now)."""
    settings = services.settings
    idem_key = None
    job_id = new_job_id()
    if idempotency_key:
        digest = hashlib.sha256(f"{client}\0{idempotency_key}".encode()).hexdigest()
        idem_key = services.keys.idempotency(digest)
        if not services.redis.set(idem_key, job_id, nx=True, ex=settings.idempotency_ttl):
            existing = services.store.get(services.redis.get(idem_key) or "")
            if existing is not None:
                return existing, False
            services.redis.set(idem_key, job_id, ex=settings.idempotency_ttl)
    try:
        job = _create(services, job_id, request)
    except BaseException:
        if idem_key:
            _forget(services, idem_key)
        raise
    return job, True


def _create(services: Services, job_id: str, request: TranslationRequest) -> Job:
    settings = services.settings
    namespace = services.cache_namespace()
    found = services.cache.get_many(namespace, [normalise(s) for s in request.sentences]) if namespace else []
    hits = sum(t is not None for t in found)
    now = utc_now()
    job = Job(
        id=job_id,
        status=QUEUED,
        texts=request.texts,
        model=settings.model,
        created_at=now,
        sentences_total=len(request.sentences),
        cached_sentences=hits,
        submitted=time.time(),
    )
    if hits == len(request.sentences):
        job.status, job.started_at, job.finished_at = SUCCEEDED, now, now
        job.sentences_done = hits
        translations = iter(found)
        job.result = [
            join_translations(segs, [next(translations) for s in segs if s.translate])  # type: ignore[misc]
            for segs in request.segments
        ]
        services.store.create(job, counters=_counters(hits, 0, fast=True))
        return job
    if services.store.pending_count() >= settings.max_queue:
        raise Overloaded(f"the queue holds {settings.max_queue} or more jobs; try again later", retry_after=5)
    services.store.create(job, counters=_counters(hits, len(request.sentences) - hits, fast=False))
    try:
        services.celery.send_task(TRANSLATE_TASK, args=[job.id], retry=True, retry_policy=_PUBLISH_RETRY)
    except (KombuError, OperationalError, redis.RedisError, OSError) as exc:
        log.error("could not enqueue job %s: %s", job.id, exc, extra={"job_id": job.id})
        _forget_job(services, job.id)
        raise Unavailable("the queue is unavailable; the job was not accepted", retry_after=5) from None
    log.info("job %s queued (%d sentences, %d cached)", job.id, job.sentences_total, hits, extra={"job_id": job.id})
    return job


def _counters(hits: int, misses: int, fast: bool) -> dict[str, int]:
    counters = {"jobs_submitted": 1, "api_cache_hits": hits, "api_cache_misses": misses}
    if fast:
        counters["jobs_answered_from_cache"] = 1
    return {name: amount for name, amount in counters.items() if amount}


def _forget(services: Services, key: str) -> None:
    try:
        services.redis.delete(key)
    except redis.RedisError:
        pass


def _forget_job(services: Services, job_id: str) -> None:
    try:
        services.store.delete(job_id)
    except redis.RedisError:
        log.warning("job %s may be left queued without a message", job_id)

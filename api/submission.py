"""Submitting a job: idempotency, the cache fast path, backpressure, then the queue."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time

import redis
from kombu.exceptions import KombuError, OperationalError

from api.usage import Charge, charge
from api.validation import TranslationRequest
from shared.celery_factory import DOCUMENT_TASK, TRANSLATE_TASK
from shared.errors import IdempotencyMismatch, Overloaded, StorageQuotaExceeded, Unavailable
from shared.routing.detected_route import AUTO, choose_route, document_route
from shared.routing.language_detection import Detection
from shared.routing.routes import Route, pair_of
from shared.store.backends import Services
from shared.store.job_record import DocumentRecord, Job, new_job_id, utc_now
from shared.store.job_status import Creation, JobStatus
from shared.store.jobs import Created, Idempotency, Usage
from shared.store.replication import wait_for_replica
from shared.store.sentence_cache import normalise
from shared.text.glossary import Glossary
from shared.text.splitter import spans_of

log = logging.getLogger(__name__)
_PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


def submit(
    services: Services,
    request: TranslationRequest,
    idempotency_key: str | None = None,
    client: str = "",
    owner: str = "",
) -> Job:
    """Store and enqueue a job, or answer it from the cache; an Idempotency-Key used before answers its job.

    `client` scopes the Idempotency-Key; `owner` is stored with the job (only it may read the job)."""
    settings = services.settings
    route, detected = _route(services, request)
    digest = request.digest(route.pair if route else f"{AUTO}-{request.target_lang or ''}")
    idempotency = None
    if idempotency_key:
        scoped = hashlib.sha256(f"{client}\0{idempotency_key}".encode()).hexdigest()
        idempotency = Idempotency(services.keys.idempotency(scoped), digest, settings.idempotency_ttl)
        earlier = _earlier(services, idempotency.key, digest)  # before any charge: a retry costs nothing
        if earlier is not None:
            return earlier
    usage = Usage(services.keys.usage(client), settings.client_storage_bytes) if settings.client_storage_bytes else None
    job = _job(new_job_id(), request, route, owner, detected)
    created, charged = _create(services, job, route, request, idempotency, usage, client)
    if created.outcome == Creation.EXISTS:
        if created.request_digest != digest:
            raise IdempotencyMismatch("this Idempotency-Key was already used with a different request body")
        existing = services.store.get(created.job_id)
        if existing is None:  # expired between the two calls
            raise Unavailable("the job of this Idempotency-Key has just expired; try again", retry_after=1)
        return existing
    if created.outcome == Creation.OVERLOADED:
        raise Overloaded(f"the queue holds {settings.max_queue} or more jobs; try again later", retry_after=5)
    if created.outcome == Creation.OVER_QUOTA:
        raise StorageQuotaExceeded(
            f"this client holds {created.held_bytes} bytes in the broker, and this job would take it over its "
            f"limit of {settings.client_storage_bytes} (TRANSQ_CLIENT_STORAGE_BYTES). What it holds is freed as "
            f"it expires, the first of it in {created.retry_after}s: documents after TRANSQ_DOCUMENT_TTL "
            f"({settings.document_ttl}s), finished jobs after TRANSQ_RESULT_TTL ({settings.result_ttl}s)",
            retry_after=min(created.retry_after, 3600),
        )
    try:
        if job.status in (JobStatus.QUEUED, JobStatus.PARSING):
            _enqueue(services, job, idempotency)
        _await_replica(services, job, idempotency)
    except Unavailable:  # the job was taken back
        charged.refund()
        raise
    return job


def _earlier(services: Services, idempotency_key: str, digest: str) -> Job | None:
    """The job an Idempotency-Key already names (422 when it was sent with another request), read before
    anything is charged; None when the key names no live job (CREATE checks it again, atomically)."""
    found = services.store.idempotent(idempotency_key)
    earlier = services.store.get(found[0]) if found else None
    if found is None or earlier is None:
        return None
    if found[1] != digest:
        raise IdempotencyMismatch("this Idempotency-Key was already used with a different request body")
    return earlier


def _route(services: Services, request: TranslationRequest) -> tuple[Route | None, Detection | None]:
    """The request's route and its detection; a document job whose language is detected has no route yet
    (the document stage chooses it from the parsed text)."""
    routes, source, target = services.routes, request.source_lang, request.target_lang
    if request.document:
        return document_route(routes, source, target), None
    return choose_route(routes, source, target, request.texts)


def _job(job_id: str, request: TranslationRequest, route: Route | None, owner: str, detected: Detection | None) -> Job:
    """The job a request asks for, before the cache has answered any of it. A document job starts `parsing`:
    the document stage parses it and queues it (on the route it chooses then, where it has none yet)."""
    return Job(
        id=job_id,
        status=JobStatus.PARSING if request.document else JobStatus.QUEUED,
        texts=request.texts,
        spans=[spans_of(text, segs) for text, segs in zip(request.texts, request.segments)],
        model=route.model if route else "",
        created_at=utc_now(),
        sentences_total=len(request.sentences),
        submitted=time.time(),
        owner=owner,
        route=route.key if route else "",
        format=request.format,
        callback_url=request.callback_url or "",
        detected=detected.public() if detected else {},
        glossary=request.glossary or {},
        want_scores=request.scores,
        min_confidence=request.min_confidence,
        withhold=request.on_low_confidence == "withhold",
        document=DocumentRecord(request.document, request.filename) if request.document else None,
    )


def _create(
    services: Services,
    job: Job,
    route: Route | None,
    request: TranslationRequest,
    idempotency: Idempotency | None,
    usage: Usage | None,
    client: str,
) -> tuple[Created, Charge]:
    """The job stored in one atomic call, finished at once when every sentence is cached; its characters
    charged to the client's quota first (shared.store.quota), and refunded when it is not stored after all."""
    settings = services.settings
    namespace = services.routes.cache_namespace(route.key) if route and not request.document else None
    glossary = Glossary.of(request.glossary) if request.glossary else None
    sentences = [normalise(s) for s in request.sentences]
    # (a text of no sentences is answered at once, as its texts with nothing to translate)
    known = namespace is not None or not (sentences or request.document)
    gate = job.min_confidence if job.min_confidence is not None else settings.min_confidence
    gate_or_off = None if gate == float("-inf") else gate
    cached = services.cache.answer(namespace or "", sentences, glossary, request.scores, gate_or_off) if known else None
    hits = cached.hits if cached else 0
    job.sentences_done = job.cached_sentences = hits  # cached sentences are done: progress starts there
    cached_characters = sum(len(s) for s, t in zip(request.sentences, cached.translations) if t) if cached else 0
    charged = charge(services.quota, client, request.characters, cached_characters)
    if job.document is not None:  # the document stage settles it to the characters it parses
        job.document = dataclasses.replace(job.document, layout=charged.noted(job.document.layout))
    if cached and cached.complete:
        job.status, job.started_at, job.finished_at = JobStatus.SUCCEEDED, job.created_at, job.created_at
        job.result = cached.texts(request.segments)
        if job.want_scores:
            job.scores = cached.text_scores(request.segments)
        job.fidelity = cached.text_fidelity(request.segments, sentences, pair_of(job.route), glossary)
        job.texts, job.spans = [], []  # a finished job's texts are not kept: its result is what it is read for
    try:
        created = services.store.create(
            job,
            idempotency=idempotency,
            max_queue=settings.max_queue,
            usage=usage,
            document_source=request.source,
            document_ttl=settings.document_ttl,
        )
    except Exception:
        charged.refund()
        raise
    if created.outcome != Creation.CREATED:
        charged.refund()
        return created, charged
    services.stats.add(_counters(hits, len(request.sentences) - hits, fast=job.status == JobStatus.SUCCEEDED))
    return created, charged


def _enqueue(services: Services, job: Job, idempotency: Idempotency | None) -> None:
    """Send the job's message; when that fails, remove the job (and its idempotency key) again."""
    document = job.status == JobStatus.PARSING
    try:
        services.celery.send_task(
            DOCUMENT_TASK if document else TRANSLATE_TASK,
            args=[job.id],
            queue=services.keys.documents_queue if document else services.keys.queue(job.route),
            retry=True,
            retry_policy=_PUBLISH_RETRY,
        )
    except (KombuError, OperationalError, redis.RedisError, OSError) as exc:
        log.error("could not enqueue job %s: %s", job.id, exc, extra={"job_id": job.id})
        _forget_job(services, job, idempotency)
        raise Unavailable("the queue is unavailable; the job was not accepted", retry_after=5) from None
    log.info(
        "job %s queued%s (%d sentences, %d cached)",
        job.id,
        " for the document stage" if document else "",
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

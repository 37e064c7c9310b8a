"""Submitting a job: idempotency, the cache fast path, backpressure, then the queue."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import time

import redis

from api.acceptance import NotAccepted, accept, rediscover, take_back
from api.memories import memory_matches
from api.usage import Charge, charge
from api.validation import TranslationRequest
from shared.errors import IdempotencyMismatch, Overloaded, StorageQuotaExceeded, Unavailable
from shared.routing.detected_route import AUTO, choose_route, document_route
from shared.routing.language_detection import Detection
from shared.routing.routes import Route, pair_of
from shared.store.backends import Services
from shared.store.job_events import Sentences
from shared.store.job_record import DocumentRecord, Job, new_job_id, utc_now
from shared.store.job_status import Creation, JobStatus
from shared.store.jobs import Created, Idempotency, Usage
from shared.store.sentence_cache import CacheAnswer, normalise
from shared.text.glossary import Glossary
from shared.text.splitter import spans_of

log = logging.getLogger(__name__)


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
    attempt = functools.partial(
        _attempt,
        services,
        request,
        route=route,
        detected=detected,
        owner=owner,
        client=client,
        idempotency=idempotency,
        usage=usage,
        digest=digest,
    )
    try:
        return attempt()
    except NotAccepted as refused:
        if not refused.retry:
            raise Unavailable(refused.message, retry_after=5) from None
        # with sentinels the primary may have moved, and pooled connections stay with the old one
        log.warning("%s: trying once more on the primary the sentinels name now", refused.message)
        rediscover(services)
    try:
        return attempt()
    except NotAccepted as refused:
        raise Unavailable(refused.message, retry_after=5) from None


def _attempt(
    services: Services,
    request: TranslationRequest,
    *,
    route: Route | None,
    detected: Detection | None,
    owner: str,
    client: str,
    idempotency: Idempotency | None,
    usage: Usage | None,
    digest: str,
) -> Job:
    """One try at storing and accepting the job (a new id each time); NotAccepted when it was taken back."""
    settings = services.settings
    job = _job(new_job_id(), request, route, owner, detected)
    created, charged = _create(services, job, route, request, idempotency, usage, client)
    if created.outcome == Creation.EXISTS:
        if created.request_digest != digest:
            raise IdempotencyMismatch("this Idempotency-Key was already used with a different request body")
        existing = services.store.get(created.job_id)
        if existing is None:  # expired between the two calls
            raise Unavailable("the job of this Idempotency-Key has just expired; try again", retry_after=1)
        return existing
    if created.outcome == Creation.TAKEN_BACK:  # (a fresh id never is: only a create re-sent after its take-back)
        raise Unavailable("the job store took this job back while it was being stored; try again", retry_after=1)
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
        accept(services, job, idempotency)
    except NotAccepted:
        _refund(charged)
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
    remembered, job.memory = memory_matches(request, route, client)  # a human translation outranks the cache's
    job.from_memory = sum(t is not None for t in remembered)
    gate = job.min_confidence if job.min_confidence is not None else settings.min_confidence
    gate_or_off = None if gate == float("-inf") else gate
    cached = services.cache.answer(namespace or "", sentences, glossary, request.scores, gate_or_off) if known else None
    if job.from_memory:  # (answered from memories even where the cache cannot be asked: no worker yet)
        cached = _memory_first(cached, remembered, request.scores)
    hits = cached.hits - job.from_memory if cached else 0
    job.cached_sentences = hits
    job.sentences_done = hits + job.from_memory  # answered sentences are done: progress starts there
    cached_characters = sum(len(s) for s, t in zip(request.sentences, cached.translations) if t) if cached else 0
    charged = charge(services.quota, client, request.characters, cached_characters)
    if job.document is not None:  # the document stage settles it to the characters it parses
        job.document = dataclasses.replace(job.document, layout=charged.noted(job.document.layout))
    # (with a fuzzy threshold, a sentence no memory holds exactly goes to the worker for its suggestions)
    if cached and cached.complete and (job.from_memory == len(sentences) or not _fuzzy(job)):
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
            cached=Sentences.answered(cached, job.want_scores) if cached else None,
        )
    except (redis.ConnectionError, redis.TimeoutError) as exc:  # stored or not: take it back ("not accepted" is true)
        log.error("job %s: the job store failed while it was stored: %r", job.id, exc, extra={"job_id": job.id})
        try:
            take_back(services, job, idempotency, "the job store failed while the job was being stored")
        except NotAccepted:
            _refund(charged)
            raise
    except Exception:
        charged.refund()
        raise
    if created.outcome != Creation.CREATED:
        charged.refund()
        return created, charged
    misses = len(request.sentences) - hits - job.from_memory
    services.stats.add(_counters(hits, misses, fast=job.status == JobStatus.SUCCEEDED))
    return created, charged


def _memory_first(cached: CacheAnswer | None, remembered: list[str | None], scores: bool) -> CacheAnswer:
    """The cache's answer (None: the cache was not asked) with the memories' exact matches in place of its own
    (they have no score)."""
    empty = [None] * len(remembered)
    cached = cached or CacheAnswer([""] * len(remembered), list(empty), list(empty) if scores else None)
    scores = cached.scores and [None if m is not None else s for m, s in zip(remembered, cached.scores)]
    translations = [m if m is not None else t for m, t in zip(remembered, cached.translations)]
    return dataclasses.replace(cached, translations=translations, scores=scores)


def _fuzzy(job: Job) -> bool:
    """Whether the job's memories are looked up for fuzzy matches (a threshold under 100)."""
    return bool(job.memory) and job.memory["threshold"] < 100


def _counters(hits: int, misses: int, fast: bool) -> dict[str, int]:
    counters = {"jobs_submitted": 1, "api_cache_hits": hits, "api_cache_misses": misses}
    if fast:
        counters["jobs_answered_from_cache"] = 1
    return {name: amount for name, amount in counters.items() if amount}


def _refund(charged: Charge) -> None:
    """Give back a taken-back job's characters (a broker failing now leaves them counted)."""
    try:
        charged.refund()
    except redis.RedisError as exc:
        log.warning("could not refund %d characters to client %s: %r", charged.characters, charged.client, exc)

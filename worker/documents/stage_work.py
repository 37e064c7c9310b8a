"""The document stage's work on one job: parse its stored sources into the job's texts (queued for the
translation workers, or finished at once when every sentence is cached), and render the translated
documents once those texts are translated. Runs only in the document stage's process (worker.documents.stage),
under its time and memory limits, never in the API's request workers."""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

from shared.celery_factory import TRANSLATE_TASK
from shared.errors import DocumentTooComplex, Expired, InvalidDocument, ValidationError
from shared.routing.detected_route import choose_route
from shared.routing.routes import pair_of
from shared.store.backends import Services
from shared.store.document_store import pack_documents, unpack_documents
from shared.store.job_events import Sentences
from shared.store.job_record import Job
from shared.store.job_status import JobStatus
from shared.store.sentence_cache import normalise
from shared.text.glossary import Glossary
from shared.text.splitter import spans_of, split_texts
from worker.documents import formats, stage_quota
from worker.documents.formats import DocumentLimits, Prepared, prepare

log = logging.getLogger(__name__)


def run_document_job(services: Services, job_id: str, fence: int | None = None) -> str:
    """Parse or render the job, whichever it waits for; what was done ('' when nothing: the job is gone,
    cancelled, not waiting for the document stage, or taken by another stage since `fence`, the stage's take)."""
    job = services.store.get(job_id)
    if job is None or job.status not in (JobStatus.PARSING, JobStatus.RENDERING):
        return ""
    layout = json.loads(job.document.layout) if job.document else {}
    packed = services.documents.source(job_id)
    if packed is None or not layout:
        raise Expired("the document expired before it was translated (TRANSQ_DOCUMENT_TTL): upload it again")
    settings = services.settings
    limit = max(settings.max_document_bytes, settings.max_body_bytes) * 8
    sources = unpack_documents(packed, job.format, limit)
    limits = DocumentLimits.from_settings(settings)
    retranslate = bool(layout.get("retranslate"))
    prepared = [
        _parse(job.format, source, layout["max_sentence_chars"], limits, i, retranslate)
        for i, source in enumerate(sources)
    ]
    if job.status == JobStatus.RENDERING:
        _render(services, job, prepared, job.result or [], fence)
        return "rendered"
    return _parsed(services, job, prepared, layout, fence)


def _parse(
    fmt: str, source: str | bytes, max_sentence_chars: int, limits: DocumentLimits, index: int, retranslate: bool
) -> Prepared:
    name = "the document" if index == 0 else f"texts[{index}]"
    try:
        return prepare(fmt, source, max_sentence_chars, limits, retranslate)
    except formats.DocumentTooComplex as exc:
        raise DocumentTooComplex(f"{name}: {exc}") from None
    except formats.DocumentError as exc:
        raise InvalidDocument(f"{name}: {exc}") from None


def _parsed(services: Services, job: Job, prepared: list[Prepared], layout: dict[str, Any], fence: int | None) -> str:
    """The parsed job joins its route's queue, or succeeds at once when every sentence is cached."""
    settings = services.settings
    units = [unit for p in prepared for unit in p.units]
    total = sum(len(unit) for unit in units)
    if total > settings.max_chars:
        raise ValidationError(f"the document has {total} characters of text; at most {settings.max_chars} are allowed")
    segments, sentences = split_texts(units, settings, "the document has")
    layout = {**layout, "units": [len(p.units) for p in prepared]}
    _choose_route(services, job, units, layout)
    namespace = services.routes.cache_namespace(job.route)
    keys = [normalise(s) for s in sentences]
    glossary = Glossary.of(job.glossary) if job.glossary else None
    known = namespace is not None or not keys  # (a document of no sentences is rendered at once)
    gate = job.min_confidence if job.min_confidence is not None else settings.min_confidence
    gate_or_off = None if gate == float("-inf") else gate
    cached = services.cache.answer(namespace or "", keys, glossary, job.want_scores, gate_or_off) if known else None
    hits = cached.hits if cached else 0
    stage_quota.settle(services, job, layout, total, sentences, cached)  # or fails it `quota_exceeded`
    job.texts, job.spans = units, [spans_of(unit, segs) for unit, segs in zip(units, segments)]
    job.sentences_total, job.sentences_done, job.cached_sentences = len(sentences), hits, hits
    job.document = dataclasses.replace(job.document, layout=json.dumps(layout, ensure_ascii=False))
    if cached and cached.complete:
        if job.want_scores:
            job.scores = cached.text_scores(segments)
        job.fidelity = cached.text_fidelity(segments, keys, pair_of(job.route), glossary)
        _render(services, job, prepared, cached.texts(segments), fence, Sentences.answered(cached, job.want_scores))
        return "rendered"
    if not services.documents.parsed(job, fence, Sentences.answered(cached, job.want_scores) if cached else None):
        return ""
    services.celery.send_task(TRANSLATE_TASK, args=[job.id], queue=services.keys.queue(job.route))
    log.info("job %s parsed: %d sentences, %d cached", job.id, len(sentences), hits, extra={"job_id": job.id})
    return "parsed"


def _choose_route(services: Services, job: Job, units: list[str], layout: dict[str, Any]) -> None:
    """Give a job submitted without a route (its language is detected: see
    shared.routing.detected_route.document_route) its route now, chosen from the document's text, with its
    model and the language detected."""
    if job.route:
        return
    route, detected = choose_route(services.routes, layout.get("source_lang"), layout.get("target_lang"), units)
    job.route, job.model = route.key, route.model
    if detected is not None:
        job.detected = detected.public()
    log.info("job %s goes to %s (%s)", job.id, route.key, detected or "no language detected", extra={"job_id": job.id})


def _render(
    services: Services,
    job: Job,
    prepared: list[Prepared],
    translations: list[str],
    fence: int | None,
    cached: Sentences | None = None,
) -> None:
    documents, position = [], 0
    for document in prepared:
        count = len(document.units)
        documents.append(document.render(translations[position : position + count]))
        position += count
    if job.scores is not None:  # each unit's sentences' scores, as each document's (units in document order)
        job.scores = _per_document(job.scores, [len(p.units) for p in prepared])
    if job.fidelity:  # each unit's sentences' fidelity records, as each document's
        job.fidelity = _per_document(job.fidelity, [len(p.units) for p in prepared])
    if services.documents.rendered(job, pack_documents(documents), fence, cached):  # type: ignore[arg-type]
        services.stats.job_finished("succeeded", job.submitted)
        log.info("job %s rendered and succeeded", job.id, extra={"job_id": job.id})


def _per_document(scores: list[list[Any]], units: list[int]) -> list[list[Any]]:
    """Each unit's sentences' scores (or fidelity records) joined into each document's."""
    out, position = [], 0
    for count in units:
        out.append([score for unit in scores[position : position + count] for score in unit])
        position += count
    return out

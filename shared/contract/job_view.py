"""A job as the API shows it, built from the contract's JobView (shared.contract); the callback deliverer sends
the same view less its callback's own state (worker.callbacks), reading a document job's translations from
the broker as the API does."""

from __future__ import annotations

from typing import Any

from shared.contract import (
    CallbackDelivery,
    Confidence,
    Detection,
    DocumentLink,
    Fidelity,
    JobResult,
    JobView,
    Progress,
    QualityGate,
)
from shared.document_formats import FILE_FORMATS
from shared.errors import ErrorCode
from shared.store.document_store import DocumentStore
from shared.store.job_record import Job
from shared.store.job_status import JobStatus
from shared.text.fidelity import gate_summary, summary


def job_error(job: Job) -> dict[str, str]:
    """A failed job's reason (a record without one failed for a reason nobody wrote down)."""
    return job.error or {"code": ErrorCode.INTERNAL_ERROR.value, "message": "the job failed"}


def job_view(
    job: Job, documents: DocumentStore, low_confidence: float, min_confidence: float = float("-inf")
) -> dict[str, Any]:
    """The job's public body: its progress; once it has succeeded its result (a document job's: its translated
    documents, from `documents`; with scores asked for, its sentences' scores and their summary against
    `low_confidence`, TRANSQ_LOW_CONFIDENCE; its sentences' fidelity records and their summary, and what its
    quality gate did: its own min_confidence, else `min_confidence`, TRANSQ_MIN_CONFIDENCE), once it has failed
    its error; its callback's delivery."""
    parts = _parts(job, documents, low_confidence, min_confidence)
    if job.callback is not None:
        delivery = job.callback
        parts["callback"] = CallbackDelivery(
            url=job.callback_url,
            state=delivery.state.value,
            attempts=delivery.attempts,
            last_status=delivery.last_status,
            last_error=delivery.last_error,
        )
    return _dump(job, parts)


def callback_body(
    job: Job, documents: DocumentStore, low_confidence: float, min_confidence: float = float("-inf")
) -> dict[str, Any]:
    """What a job's callback POSTs: its view (job_view) without its callback, whose delivery's own state is
    not news to its receiver."""
    return _dump(job, _parts(job, documents, low_confidence, min_confidence))


def quality(job: Job, min_confidence: float) -> dict[str, Any]:
    """A finished job's fidelity summary and, for a gated job (its min_confidence, else `min_confidence`,
    TRANSQ_MIN_CONFIDENCE), what its quality gate did (shared.text.fidelity)."""
    if not job.fidelity:
        return {}
    parts: dict[str, Any] = {"fidelity": Fidelity(**summary(job.fidelity))}
    gate = job.min_confidence if job.min_confidence is not None else min_confidence
    if gate != float("-inf"):
        parts["quality_gate"] = QualityGate(**gate_summary(job.fidelity, gate))
    return parts


def _parts(job: Job, documents: DocumentStore, low_confidence: float, min_confidence: float) -> dict[str, Any]:
    """The parts of the view that only some jobs have, its callback's apart."""
    parts: dict[str, Any] = {}
    if job.warnings:
        parts["warnings"] = job.warnings
    if job.document is not None:
        parts["document"] = DocumentLink(filename=job.document.filename or None, download=download_url(job.id))
    if job.status == JobStatus.SUCCEEDED:
        parts["result"] = (
            _document_result(job, documents) if job.document is not None else JobResult(translations=job.result or [])
        )
        if job.scores is not None:
            parts["result"].scores = job.scores
            parts["confidence"] = confidence(job.scores, low_confidence)
        if job.fidelity:
            parts["result"].fidelity = job.fidelity
        parts.update(quality(job, min_confidence))
    if job.status == JobStatus.FAILED:
        parts["error"] = job_error(job)
    if job.detected:
        parts["detected"] = Detection(**job.detected)
    if job.memory:
        parts["from_memory"] = job.from_memory
    if job.suggestions:
        parts["suggestions"] = job.suggestions
    return parts


def _dump(job: Job, parts: dict[str, Any]) -> dict[str, Any]:
    view = JobView(
        id=job.id,
        status=job.status,
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        progress=Progress(sentences_done=job.sentences_done, sentences_total=job.sentences_total),
        cached_sentences=job.cached_sentences,
        model=job.model or None,
        format=job.format,
        **parts,
    )
    return view.model_dump(mode="json", exclude_unset=True)


def confidence(scores: list[list[float | None]], threshold: float) -> Confidence:
    """A job's sentence scores in brief: their mean and minimum, and how many are under `threshold`."""
    known = [s for text in scores for s in text if s is not None]
    return Confidence(
        mean=sum(known) / len(known) if known else None,
        min=min(known, default=None),
        low=sum(s < threshold for s in known),
        threshold=threshold,
    )


def download_url(job_id: str) -> str:
    return f"/v1/jobs/{job_id}/document"


def _document_result(job: Job, documents: DocumentStore) -> JobResult:
    """A file format's document (Word, PO, XLIFF) is only downloaded; a text document's translation is in the job too (none once expired)."""
    if job.format in FILE_FORMATS:
        return JobResult(document_url=download_url(job.id))
    return JobResult(document_url=download_url(job.id), translations=documents.translated(job.id, job.format) or [])

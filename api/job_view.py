"""A job as the API shows it, built from the contract's JobView (api.contract)."""

from __future__ import annotations

from typing import Any, Callable

from api.contract import CallbackDelivery, Detection, DocumentLink, JobResult, JobView, Progress
from api.errors import NotFound
from shared.callback_state import callback_view, delivery_state
from shared.error_codes import ErrorCode
from shared.job_status import JobStatus
from shared.jobs import Job

# A succeeded document job's translated documents, None once they have expired.
DocumentReader = Callable[[Job], list[str | bytes] | None]


def job_error(job: Job) -> dict[str, str]:
    """A failed job's reason (a record without one failed for a reason nobody wrote down)."""
    return job.error or {"code": ErrorCode.INTERNAL_ERROR.value, "message": "the job failed"}


def job_view(job: Job, read_documents: DocumentReader | None = None) -> dict[str, Any]:
    """The job's public body: its progress; once it has succeeded its result (a document job's: its translated
    documents, read by `read_documents`, by default from the API's services), once it has failed its error."""
    parts: dict[str, Any] = {}
    if job.warnings:
        parts["warnings"] = job.warnings
    if job.has_document:
        parts["document"] = DocumentLink(filename=job.filename or None, download=_download(job))
    if job.status == JobStatus.SUCCEEDED:
        parts["result"] = (
            _document_result(job, read_documents or _stored_documents)
            if job.has_document
            else JobResult(translations=job.result or [])
        )
    if job.status == JobStatus.FAILED:
        parts["error"] = job_error(job)
    if job.detected:
        parts["detected"] = Detection(**job.detected)
    if job.callback_url:
        delivery = job.callback or delivery_state({"callback_url": job.callback_url})  # a job just made: pending
        parts["callback"] = CallbackDelivery(**callback_view(job.callback_url, delivery))
    view = JobView(
        id=job.id,
        status=job.status,
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        progress=Progress(sentences_done=job.sentences_done, sentences_total=job.sentences_total),
        cached_sentences=job.cached_sentences,
        model=job.model,
        format=job.format,
        **parts,
    )
    return view.model_dump(mode="json", exclude_unset=True)


def _download(job: Job) -> str:
    return f"/v1/jobs/{job.id}/document"


def _document_result(job: Job, read_documents: DocumentReader) -> JobResult:
    """A Word file is only downloaded; a text document's translation is in the job too (none once expired)."""
    if job.format == "docx":
        return JobResult(document_url=_download(job))
    return JobResult(document_url=_download(job), translations=read_documents(job) or [])


def _stored_documents(job: Job) -> list[str | bytes] | None:
    from api.document_jobs import documents_of  # the API's services: imported where they exist

    try:
        return documents_of(job)
    except NotFound:
        return None

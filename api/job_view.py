"""A job as the API shows it, built from the contract's JobView (api.contract)."""

from __future__ import annotations

from typing import Any

from api.contract import DocumentLink, JobResult, JobView, Progress
from api.document_jobs import documents_of
from api.errors import NotFound
from shared.error_codes import ErrorCode
from shared.job_status import JobStatus
from shared.jobs import Job


def job_error(job: Job) -> dict[str, str]:
    """A failed job's reason (a record without one failed for a reason nobody wrote down)."""
    return job.error or {"code": ErrorCode.INTERNAL_ERROR.value, "message": "the job failed"}


def job_view(job: Job) -> dict[str, Any]:
    """The job's public body: its progress; once it has succeeded its result (a document job's: its translated
    documents), once it has failed its error."""
    parts: dict[str, Any] = {}
    if job.warnings:
        parts["warnings"] = job.warnings
    if job.has_document:
        parts["document"] = DocumentLink(filename=job.filename or None, download=_download(job))
    if job.status == JobStatus.SUCCEEDED:
        parts["result"] = _document_result(job) if job.has_document else JobResult(translations=job.result or [])
    if job.status == JobStatus.FAILED:
        parts["error"] = job_error(job)
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


def _document_result(job: Job) -> JobResult:
    """A Word file is only downloaded; a text document's translation is in the job too (none once expired)."""
    if job.format == "docx":
        return JobResult(document_url=_download(job))
    try:
        translations = documents_of(job)
    except NotFound:
        translations = []
    return JobResult(document_url=_download(job), translations=translations)

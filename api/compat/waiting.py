"""A synchronous call's job: submitted as every job is, waited for as POST /v1/translate waits, and what
the wait ends in as an exception when it is not success (so each API answers it in its own shape)."""

from __future__ import annotations

from flask import request

from api.auth import client_id, owner_id
from api.current import services
from api.documents.job_documents import document_info, documents_of
from api.glossaries import with_glossary
from api.submission import submit
from api.translate import wait_for
from api.validation import TranslationRequest
from shared.contract.job_view import job_error
from shared.errors import ApiError, Conflict, ErrorCode
from shared.store.job_record import Job
from shared.store.job_status import JobStatus


class JobFailed(ApiError):
    """The job failed: its own error code and message (a worker's failure is the backend's, 502)."""

    def __init__(self, job: Job):
        error = job_error(job)
        super().__init__(error["message"])
        try:
            self.code = ErrorCode(error["code"])
        except ValueError:
            self.code = ErrorCode.WORKER_LOST


class StillRunning(ApiError):
    """Not finished within TRANSQ_WAIT_TIMEOUT: 504, naming the job (it goes on)."""

    code = ErrorCode.TIMEOUT


def submitted(translation: TranslationRequest) -> Job:
    """Submit a request with its stored glossary merged in, for the caller."""
    translation = with_glossary(translation, client_id())
    return submit(services(), translation, request.headers.get("Idempotency-Key"), client_id(), owner_id())


def finished(job: Job) -> Job:
    """Wait up to TRANSQ_WAIT_TIMEOUT for the job: succeeded, or raise why not."""
    wait = services().settings.wait_timeout
    job = wait_for(job, wait)
    if job.status == JobStatus.SUCCEEDED:
        return job
    if job.status == JobStatus.FAILED:
        raise JobFailed(job)
    if job.finished:
        raise Conflict(f"job {job.id} was cancelled")
    raise StillRunning(f"no translation within {wait:g}s; it is still running as job {job.id} (GET /v1/jobs/{job.id})")


def translations(job: Job) -> list[str]:
    """A succeeded job's translations, one per text (HTML texts too)."""
    found = documents_of(job) if document_info(job) else job.result or []
    return [item.decode() if isinstance(item, bytes) else item for item in found]


def source_of(job: Job, asked: str | None) -> str:
    """The source language the job was translated from: the one asked for, else the one detected (its
    route's pair: "<source>-<target>-<digest>")."""
    if asked and asked != "auto":
        return asked
    detected = (job.detected or {}).get("language")
    return str(detected or job.route.split("-", 1)[0])

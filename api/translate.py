"""Convenience calls that submit a job and wait for it."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from flask import Blueprint, jsonify, request

from api.auth import client_id, owner_id
from api.current import services
from api.documents.job_documents import document_info, documents_of
from api.errors import error_response
from api.glossaries import with_glossary
from api.jobs import job_response
from api.submission import submit
from api.validation import parse_translation_request, read_json_object
from shared.contract import ErrorBody, ErrorDetail, LegacyRequest, LegacyTranslation, TranslateRequest, Translations
from shared.contract.job_view import confidence, job_error, quality
from shared.errors import ErrorCode, job_failure_status
from shared.store.job_record import Job
from shared.store.job_status import JobStatus

bp = Blueprint("translate", __name__)
DEFAULT_WAIT = 10.0


def wait_for(job: Job, timeout: float) -> Job:
    """Poll the job store until the job is final or the timeout passes (under gevent the sleeps yield,
    so a waiting request holds no thread). A poll reads the job's status only (one HGET); its record is
    read once, when it is final or the wait ends (reading it whole at every poll was most of the API's CPU
    per /v1/translate call: bench/per_job_cost.py)."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    store = services().store
    status = job.status
    while not status.final and time.monotonic() < deadline:
        time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        delay = min(delay * 1.5, 0.25)
        found = store.statuses([job.id])[0]
        if found is None:  # gone (expired): what was last read stands
            break
        status = JobStatus(found)
    if status == job.status:
        return job
    return store.get(job.id) or job


def _failed(job: Job):  # type: ignore[no-untyped-def]
    error = ErrorDetail.model_validate(job_error(job))
    response = jsonify(ErrorBody(error=error).model_dump())
    response.status_code = job_failure_status(error.code)  # the job failed, the API did not: never 500
    return response


def _cancelled(job: Job):  # type: ignore[no-untyped-def]
    return error_response(ErrorCode.CONFLICT, f"job {job.id} was cancelled")


@bp.post("/v1/translate")
def translate():  # type: ignore[no-untyped-def]
    """Submit and wait up to `timeout` seconds: 200 with translations, else 202 with the job."""
    body = read_json_object(request, services().settings)
    req = with_glossary(parse_translation_request(body, services().settings, TranslateRequest), client_id())
    job = submit(services(), req, request.headers.get("Idempotency-Key"), client_id(), owner_id())
    timeout = req.timeout if req.timeout is not None else min(DEFAULT_WAIT, services().settings.wait_timeout)
    job = wait_for(job, timeout)
    if job.status == JobStatus.SUCCEEDED:
        translations = documents_of(job) if document_info(job) else job.result or []
        scored = (
            {"scores": job.scores, "confidence": confidence(job.scores, services().settings.low_confidence)}
            if job.scores is not None
            else {}
        )
        scored.update(quality(job, services().settings.min_confidence))
        return Translations(translations=translations, **scored).model_dump(mode="json", exclude_unset=True)
    if job.status == JobStatus.FAILED:
        return _failed(job)
    if job.finished:
        return _cancelled(job)
    return job_response(job)


@bp.post("/api/translate")
def legacy_translate():  # type: ignore[no-untyped-def]
    """The single-process services' call: {"text"} -> {"translation", "timestamp"}, or an error; never a
    job body (its callers know nothing of jobs): 504 `timeout` names the job to poll."""
    body = read_json_object(request, services().settings)
    req = parse_translation_request(body, services().settings, LegacyRequest)
    job = submit(services(), req, None, client_id(), owner_id())
    job = wait_for(job, services().settings.wait_timeout)
    if job.status == JobStatus.SUCCEEDED:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return LegacyTranslation(translation="\n".join(job.result or []), timestamp=stamp).model_dump()
    if job.status == JobStatus.FAILED:
        return _failed(job)
    if job.finished:
        return _cancelled(job)
    return error_response(
        ErrorCode.TIMEOUT,
        f"no translation within {services().settings.wait_timeout:g}s; it is still running as job {job.id} "
        f"(GET /v1/jobs/{job.id})",
    )

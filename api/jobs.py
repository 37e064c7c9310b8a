"""The job resource: submit, read, cancel."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from api.auth import client_id, owner_id
from api.current import services
from api.glossaries import with_glossary
from api.memories import add_corrections, owned
from api.submission import submit
from api.validation import parse_translation_request, read_json_object, validated
from shared.contract.job_view import job_view
from shared.contract.stored_bodies import CorrectionsBody
from shared.errors import Conflict, NotFound, ValidationError
from shared.store.job_record import Job, is_job_id
from shared.store.job_status import Move

bp = Blueprint("jobs", __name__, url_prefix="/v1/jobs")


def view(job: Job) -> dict[str, Any]:
    """The job's public body (shared.contract.job_view) with this API's document store and settings."""
    settings = services().settings
    return job_view(job, services().documents, settings.low_confidence, settings.min_confidence)


def job_response(job: Job):  # type: ignore[no-untyped-def]
    """200 with a finished job; 202 with Location for one still to run."""
    if job.finished:
        return view(job), 200
    return view(job), 202, {"Location": f"/v1/jobs/{job.id}"}


def load_job(job_id: str) -> Job:
    """The job, if the caller may see it: another API key's job is as unknown as a missing one (404)."""
    job = services().store.get(job_id) if is_job_id(job_id) else None
    if job is None or (job.owner and job.owner != owner_id()):
        raise NotFound(f"no job {job_id}")
    return job


@bp.post("")
def create_job():  # type: ignore[no-untyped-def]
    """Validate, then answer from the cache (200) or queue the job (202)."""
    body = read_json_object(request, services().settings)
    translation = with_glossary(parse_translation_request(body, services().settings), client_id())
    job = submit(services(), translation, request.headers.get("Idempotency-Key"), client_id(), owner_id())
    return job_response(job)


@bp.get("/<job_id>")
def get_job(job_id: str):  # type: ignore[no-untyped-def]
    return view(load_job(job_id))


@bp.delete("/<job_id>")
def cancel_job(job_id: str):  # type: ignore[no-untyped-def]
    load_job(job_id)  # 404 for another key's job
    outcome = services().store.cancel(job_id)
    if outcome == Move.MISSING:
        raise NotFound(f"no job {job_id}")
    if outcome == Move.REFUSED:
        raise Conflict(f"job {job_id} has already finished")
    return view(load_job(job_id))


@bp.post("/<job_id>/corrections")
def correct_job(job_id: str):  # type: ignore[no-untyped-def]
    """Store corrected sentences of a job submitted with `translation_memory` in a memory of the caller's
    (`{"translation_memory": id, "corrections": {"3": "..."}}`): the next job with those sentences gets them."""
    settings = services().settings
    body = validated(CorrectionsBody, read_json_object(request, settings), settings)
    job = load_job(job_id)
    memory = owned(client_id(), body.translation_memory)
    sources = job.memory.get("sources")
    if not sources:
        raise Conflict(
            f"job {job_id} kept no source sentences: corrections apply to jobs submitted with translation_memory"
        )
    if memory.pair != job.memory["pair"]:
        raise ValidationError(
            f"translation_memory {memory.id} is a {memory.pair} memory; job {job_id} is {job.memory['pair']}"
        )
    corrections = {int(index): target for index, target in body.corrections.items()}
    outside = [i for i in corrections if i >= len(sources)]
    if outside:
        raise ValidationError(
            f"corrections[{outside[0]}]: the job has {len(sources)} sentences (0 to {len(sources) - 1})"
        )
    return add_corrections(memory.id, sources, corrections)

"""The parts the operations' responses are made of: a response by its model, the errors by status, the
job id and Idempotency-Key parameters."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from shared.contract.views import ErrorBody, JobView
from shared.store.job_record import JOB_ID_PATTERN


def ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def answer(description: str, schema: Any = None, media: str = "application/json", **headers: str) -> dict[str, Any]:
    """A response: its description, its body's schema (a model, or a schema) and its headers."""
    response: dict[str, Any] = {"description": description}
    if schema is not None:
        response["content"] = {media: {"schema": ref(schema) if isinstance(schema, type) else schema}}
    if headers:
        response["headers"] = {
            name: {"schema": {"type": "integer" if name == "Retry-After" else "string"}, "description": text}
            for name, text in headers.items()
        }
    return response


def error(description: str, retry_after: bool = False) -> dict[str, Any]:
    return answer(description, ErrorBody, **({"Retry-After": "Seconds to wait."} if retry_after else {}))


def job(description: str, location: bool = False) -> dict[str, Any]:
    return answer(description, JobView, **({"Location": "The job's URL."} if location else {}))


def json_body(schema: type[BaseModel]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": ref(schema)}}}


ERRORS = {
    "400": error(
        "Body is not valid JSON, not valid UTF-8 or nested too deeply (`invalid_json`), or its chunked framing "
        "is broken (`bad_request`)."
    ),
    "401": error("API keys are configured and the key is missing or wrong (`unauthorized`)."),
    "408": error("The body was not sent within TRANSQ_READ_TIMEOUT seconds (`request_timeout`)."),
    "413": error("Body over the byte limit (`payload_too_large`)."),
    "415": error("Content-Type is not application/json (`unsupported_media_type`)."),
    "422": error(
        "Wrong types, empty text, too many texts/characters/sentences (`validation_error`); a language pair "
        "no model serves, or a pair left out while several are served (`unsupported_language_pair`, naming the "
        "served pairs); an Idempotency-Key already used with a different request (`idempotency_mismatch`); a "
        "text that is not a well-formed document of its `format` (`invalid_document`)."
    ),
    "429": error(
        "Rate limit exceeded, or too many failed API key checks from this address (`rate_limited`); the "
        "client (API key, or address) over its daily or monthly characters (`quota_exceeded`: Retry-After says "
        "when the limit resets); or holding TRANSQ_CLIENT_STORAGE_BYTES in the broker already "
        "(`storage_quota_exceeded`: its job records, glossaries included, its documents and its stored "
        "glossaries are freed as they expire; Retry-After says when the first goes).",
        retry_after=True,
    ),
    "503": error("Queue over its limit (`overloaded`) or Redis down/full (`unavailable`).", retry_after=True),
}
SUBMIT_ERRORS = {code: ERRORS[code] for code in ("400", "401", "408", "413", "415", "422", "429", "503")}
GLOSSARY_MISSING = {"404": error("`glossary_id` names no stored glossary of this API key (`not_found`).")}
READ_ERRORS = {code: ERRORS[code] for code in ("401", "429", "503")}
JOB_FAILED = {
    "409": error("The job was cancelled meanwhile (`conflict`)."),
    "502": error("The job failed: its worker was lost or broke (`worker_lost`, `internal_error`)."),
    "422": error(
        "As for POST /v1/jobs, or the job failed because a sentence needs more memory than the worker has "
        "(`resource_exhausted`)."
    ),
    "504": error("The job failed with `timeout` (it ran over the task time limit)."),
}
IDEMPOTENCY_KEY = {"name": "Idempotency-Key", "in": "header", "required": False, "schema": {"type": "string"}}
JOB_ID = {"name": "job_id", "in": "path", "required": True, "schema": {"type": "string", "pattern": JOB_ID_PATTERN}}
ACCEPTED = {
    "200": job("The Idempotency-Key names a job already finished: that job."),
    "202": job(
        "Accepted at once: the job is `queued` (a document job `parsing`: the document stage parses it off the "
        "request path, then queues it; a malformed or too complex document fails the job).",
        location=True,
    ),
}
PUBLIC = [{}]  # no API key needed

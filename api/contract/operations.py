"""Every operation of the API: what it takes and what it answers, by the contract's models (api.openapi
assembles /openapi.json from this)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from api.contract.requests import FORM_FIELDS_BYTES, DocumentForm, JobRequest, LegacyRequest, TranslateRequest
from api.contract.views import ErrorBody, Health, JobView, LegacyTranslation, Readiness, ServedLanguages, Translations
from api.documents import FORMATS, MEDIA_TYPES
from shared.jobs import JOB_ID_PATTERN
from shared.settings import Settings

REQUESTS = (JobRequest, TranslateRequest, LegacyRequest, DocumentForm)  # schemas of what is validated
VIEWS = (JobView, ErrorBody, Translations, LegacyTranslation, ServedLanguages, Health, Readiness)  # of what is shown


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
        "Rate limit exceeded, or too many failed API key checks from this address (`rate_limited`); or the "
        "client (API key, or address) holds TRANSQ_CLIENT_STORAGE_BYTES in the broker already "
        "(`storage_quota_exceeded`: its job records and documents are freed as they expire; Retry-After says "
        "when the first goes).",
        retry_after=True,
    ),
    "503": error("Queue over its limit (`overloaded`) or Redis down/full (`unavailable`).", retry_after=True),
}
SUBMIT_ERRORS = {code: ERRORS[code] for code in ("400", "401", "408", "413", "415", "422", "429", "503")}
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


def paths(settings: Settings) -> dict[str, Any]:
    """The paths of /openapi.json."""
    binary = {"type": "string", "format": "binary"}
    return {
        "/v1/jobs": {
            "post": {
                "summary": "Submit a translation job",
                "parameters": [IDEMPOTENCY_KEY],
                "requestBody": json_body(JobRequest),
                "responses": {**ACCEPTED, **SUBMIT_ERRORS},
            }
        },
        "/v1/documents": {
            "post": {
                "summary": "Submit a document file (.txt, .md, .html, .srt, .docx) to translate",
                "description": "The file as the `file` field of a multipart form (with optional `format`, "
                "`source_lang`, `target_lang` fields), or as the body itself (format from the `filename` or "
                "`format` query parameter, or the Content-Type). Its structure (tags, attributes, code, "
                "links, subtitle numbers and timings, Word runs, tables and styles) comes back as it was.",
                "parameters": [
                    IDEMPOTENCY_KEY,
                    {"name": "filename", "in": "query", "required": False, "schema": {"type": "string"}},
                    {
                        "name": "format",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "enum": list(FORMATS)},
                    },
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "multipart/form-data": {"schema": ref(DocumentForm)},
                        "application/octet-stream": {"schema": binary},
                    },
                },
                "responses": {
                    **ACCEPTED,
                    **SUBMIT_ERRORS,
                    "400": error("A multipart body without a boundary, or cut short (`bad_request`)."),
                    "413": error(
                        f"The file is over TRANSQ_MAX_DOCUMENT_BYTES ({settings.max_document_bytes}); a form's "
                        f"other fields may take {FORM_FIELDS_BYTES} bytes more (`payload_too_large`)."
                    ),
                    "415": error("A file type transq does not read (`unsupported_media_type`)."),
                    "422": error(
                        "A file that is not UTF-8/UTF-16 text, or a .docx that is not a zip (`invalid_document`), "
                        "an empty one (`validation_error`), or as for POST /v1/jobs. What only parsing finds (a "
                        "broken .docx, a SubRip file without timings, a zip without word/document.xml: "
                        "`invalid_document`; one over TRANSQ_MAX_DOCUMENT_PARTS or a .docx over its unpacked-size "
                        "limit: `document_too_complex`; too much text) fails the job instead."
                    ),
                },
            }
        },
        "/v1/jobs/{job_id}/document": {
            "get": {
                "summary": "Download a document job's translated file",
                "parameters": [JOB_ID],
                "responses": {
                    "200": {
                        "description": "The translated document, in its own format, as an attachment named after "
                        "the upload with the target language (report.md -> report.en.md).",
                        "content": {media: {"schema": binary} for media in sorted(set(MEDIA_TYPES.values()))},
                    },
                    **READ_ERRORS,
                    "404": error("Unknown or expired job, or a job without a document (`not_found`)."),
                    "409": error("The job has not succeeded (yet), or holds several documents (`conflict`)."),
                },
            }
        },
        "/v1/jobs/{job_id}": {
            "get": {
                "summary": "Read a job",
                "parameters": [JOB_ID],
                "responses": {"200": job("The job."), **READ_ERRORS, "404": error("Unknown or expired job.")},
            },
            "delete": {
                "summary": "Cancel a queued or running job",
                "parameters": [JOB_ID],
                "responses": {
                    "200": job("The job, now cancelled."),
                    **READ_ERRORS,
                    "404": error("Unknown or expired job."),
                    "409": error("The job had already finished (`conflict`)."),
                },
            },
        },
        "/v1/translate": {
            "post": {
                "summary": "Submit and wait up to `timeout` seconds",
                "requestBody": json_body(TranslateRequest),
                "responses": {
                    "200": answer("Done in time.", Translations),
                    "202": job("Not done in time: poll the job.", location=True),
                    **SUBMIT_ERRORS,
                    **JOB_FAILED,
                },
            }
        },
        "/api/translate": {
            "post": {
                "summary": "One text, the call of the single-process services transq replaces",
                "requestBody": json_body(LegacyRequest),
                "responses": {
                    "200": answer("The translation.", LegacyTranslation),
                    **SUBMIT_ERRORS,
                    **JOB_FAILED,
                    "504": error(
                        "No translation within TRANSQ_WAIT_TIMEOUT (`timeout`; the message names the job to poll), "
                        "or the job failed with `timeout`."
                    ),
                },
            }
        },
        "/v1/languages": {
            "get": {
                "summary": "The served language pairs, with their models and live workers",
                "security": PUBLIC,
                "responses": {"200": answer("One entry per pair.", ServedLanguages)},
            }
        },
        "/healthz": {
            "get": {
                "summary": "Liveness",
                "security": PUBLIC,
                "responses": {"200": answer("The process is up.", Health)},
            }
        },
        "/readyz": {
            "get": {
                "summary": "Readiness",
                "security": PUBLIC,
                "responses": {
                    "200": answer("Redis answers and a worker has its model loaded.", Readiness),
                    "503": error("Not ready, with the reason.", retry_after=True),
                },
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus metrics",
                "security": PUBLIC,
                "responses": {
                    "200": answer("Prometheus text format.", {"type": "string"}, "text/plain"),
                    "503": answer("Redis unavailable.", {"type": "string"}, "text/plain"),
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "security": PUBLIC,
                "responses": {"200": answer("OpenAPI 3.", {"type": "object"})},
            }
        },
    }

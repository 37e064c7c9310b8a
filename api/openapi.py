"""GET /openapi.json (the OpenAPI 3 description of the API) and GET /docs (Swagger UI, served locally)."""

from __future__ import annotations

from typing import Any

import redis
from flask import Blueprint, Response, abort, send_from_directory

from api import services
from api.documents.formats import FORMATS, MEDIA_TYPES, TEXT_FORMATS
from api.routing import Pair
from api.security_headers import page_policy
from api.validation import NOT_BLANK
from shared.job_status import JobStatus

bp = Blueprint("openapi", __name__)


def _error(description: str, retry_after: bool = False) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    if retry_after:
        response["headers"] = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}
    return response


_ERRORS = {
    "400": _error(
        "Body is not valid JSON, not valid UTF-8 or nested too deeply (`invalid_json`), or its chunked framing "
        "is broken (`bad_request`)."
    ),
    "401": _error("API keys are configured and the key is missing or wrong (`unauthorized`)."),
    "408": _error("The body was not sent within TRANSQ_READ_TIMEOUT seconds (`request_timeout`)."),
    "413": _error("Body over the byte limit (`payload_too_large`)."),
    "415": _error("Content-Type is not application/json (`unsupported_media_type`)."),
    "422": _error(
        "Wrong types, empty text, too many texts/characters/sentences (`validation_error`); a language pair "
        "no model serves, or a pair left out while several are served (`unsupported_language_pair`, naming the "
        "served pairs); an Idempotency-Key already used with a different request (`idempotency_mismatch`); a "
        "text that is not a well-formed document of its `format` (`invalid_document`)."
    ),
    "429": _error(
        "Rate limit exceeded, or too many failed API key checks from this address (`rate_limited`); or the "
        "client (API key, or address) holds TRANSQ_CLIENT_STORAGE_BYTES in the broker already "
        "(`storage_quota_exceeded`: its job records and documents are freed as they expire; Retry-After says "
        "when the first goes).",
        retry_after=True,
    ),
    "503": _error("Queue over its limit (`overloaded`) or Redis down/full (`unavailable`).", retry_after=True),
}
_JOB_ID = {"name": "job_id", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"}}


def _job(description: str, location: bool = False) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Job"}}},
    }
    if location:
        response["headers"] = {"Location": {"schema": {"type": "string"}, "description": "The job's URL."}}
    return response


def spec() -> dict[str, Any]:
    settings = services().settings
    text = {"type": "string", "minLength": 1, "maxLength": settings.max_chars, "pattern": NOT_BLANK}
    try:
        pairs = list(services().routes.pairs().values())
    except redis.RedisError:  # the document is still served; it names the API's own pair meanwhile
        default = services().routes.default
        pairs = [Pair(default.source, default.target, [default])]
    served = ", ".join(sorted(f"{p.source}-{p.target}" for p in pairs))
    languages = {
        "source_lang": {
            "type": "string",
            "enum": sorted({p.source for p in pairs}),
            "description": f"Optional when one pair fits the other field. Served pairs: {served} (GET /v1/languages).",
        },
        "target_lang": {"type": "string", "enum": sorted({p.target for p in pairs})},
        "format": {
            "type": "string",
            "enum": list(TEXT_FORMATS),
            "default": "text",
            "description": "What each text is: plain text, or an HTML, Markdown or SubRip document whose markup, "
            "code and timings come back untouched (only its text is translated). Word files: POST /v1/documents.",
        },
    }
    # Exactly one of `texts` and `text`: oneOf fails when both are present.
    submit_body = {
        "oneOf": [
            {
                "type": "object",
                "required": ["texts"],
                "not": {"required": ["text"]},
                "properties": {
                    "texts": {"type": "array", "minItems": 1, "maxItems": settings.max_texts, "items": text},
                    **languages,
                },
            },
            {
                "type": "object",
                "required": ["text"],
                "not": {"required": ["texts"]},
                "properties": {"text": text, **languages},
            },
        ],
    }
    errors_for_submit = {k: _ERRORS[k] for k in ("400", "401", "408", "413", "415", "422", "429", "503")}
    job_failed = {
        "409": _error("The job was cancelled meanwhile (`conflict`)."),
        "502": _error("The job failed: its worker was lost or broke (`worker_lost`, `internal_error`)."),
        "504": _error("The job failed with `timeout` (it ran over the task time limit)."),
    }
    json_body = lambda schema: {"required": True, "content": {"application/json": {"schema": schema}}}  # noqa: E731
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "transq",
            "version": "1.0.0",
            "description": "Queue-based machine translation: submit jobs, poll them, get cached repeats at once.",
        },
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["code", "message"],
                            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                        }
                    },
                },
                "SubmitRequest": submit_body,
                "Job": {
                    "type": "object",
                    "required": ["id", "status", "created_at", "progress", "cached_sentences", "model"],
                    "properties": {
                        "id": {"type": "string"},
                        "status": {
                            "type": "string",
                            "enum": list([status.value for status in JobStatus]),
                            "description": "A job goes queued -> running -> succeeded (or failed, cancelled); a "
                            "document job goes parsing (the document stage reads it) -> queued -> running -> "
                            "rendering (the document stage writes the translated document) -> succeeded.",
                        },
                        "created_at": {"type": "string"},
                        "started_at": {"type": "string", "nullable": True},
                        "finished_at": {"type": "string", "nullable": True},
                        "progress": {
                            "type": "object",
                            "required": ["sentences_done", "sentences_total"],
                            "properties": {
                                "sentences_done": {"type": "integer"},
                                "sentences_total": {"type": "integer"},
                            },
                        },
                        "cached_sentences": {"type": "integer"},
                        "model": {"type": "string"},
                        "format": {"type": "string", "enum": list(FORMATS)},
                        "document": {
                            "type": "object",
                            "description": "A document job's file name and where its translation is downloaded.",
                            "properties": {
                                "filename": {"type": "string", "nullable": True},
                                "download": {"type": "string"},
                            },
                        },
                        "warnings": {
                            "type": "array",
                            "description": "Translations that looped or ran far too long: made again with repeats "
                            "banned and a length cap (`degenerate_output`), by sentence index.",
                            "items": {
                                "type": "object",
                                "required": ["code", "message", "sentence"],
                                "properties": {
                                    "code": {"type": "string"},
                                    "message": {"type": "string"},
                                    "sentence": {"type": "integer"},
                                },
                            },
                        },
                        "result": {
                            "type": "object",
                            "description": "One translation per text (for a document job: the translated "
                            "documents; a Word file's is downloaded from `document_url`).",
                            "properties": {
                                "translations": {"type": "array", "items": {"type": "string"}},
                                "document_url": {"type": "string"},
                            },
                        },
                        "error": {
                            "type": "object",
                            "required": ["code", "message"],
                            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                            "description": "A failed job's reason: e.g. `invalid_document` (a malformed document), "
                            "`document_too_complex` (its parsing or rendering needed more than "
                            "TRANSQ_DOCUMENT_TIME_LIMIT or TRANSQ_DOCUMENT_MEMORY_MB), `validation_error` (too many "
                            "characters or sentences), `timeout`, `worker_lost`.",
                        },
                    },
                },
            },
        },
        "security": [{}, {"bearer": []}, {"apiKey": []}],
        "paths": {
            "/v1/jobs": {
                "post": {
                    "summary": "Submit a translation job",
                    "parameters": [
                        {"name": "Idempotency-Key", "in": "header", "required": False, "schema": {"type": "string"}}
                    ],
                    "requestBody": json_body({"$ref": "#/components/schemas/SubmitRequest"}),
                    "responses": {
                        "200": _job("The Idempotency-Key names a job already finished: that job."),
                        "202": _job(
                            "Accepted at once: the job is `parsing` (the document stage parses it off the request "
                            "path, then queues it; a malformed or too complex document fails the job).",
                            location=True,
                        ),
                        **errors_for_submit,
                    },
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
                        {"name": "Idempotency-Key", "in": "header", "required": False, "schema": {"type": "string"}},
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
                            "multipart/form-data": {
                                "schema": {
                                    "type": "object",
                                    "required": ["file"],
                                    "properties": {
                                        "file": {"type": "string", "format": "binary"},
                                        "format": {"type": "string", "enum": list(FORMATS)},
                                        "source_lang": {"type": "string"},
                                        "target_lang": {"type": "string"},
                                    },
                                }
                            },
                            "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
                        },
                    },
                    "responses": {
                        "200": _job("The Idempotency-Key names a job already finished: that job."),
                        "202": _job(
                            "Accepted at once: the job is `parsing` (the document stage parses it off the request "
                            "path, then queues it; a malformed or too complex document fails the job).",
                            location=True,
                        ),
                        **errors_for_submit,
                        "413": _error(
                            f"The file is over TRANSQ_MAX_DOCUMENT_BYTES ({settings.max_document_bytes}) "
                            "(`payload_too_large`)."
                        ),
                        "400": _error("A multipart body without a boundary, or cut short (`bad_request`)."),
                        "415": _error("A file type transq does not read (`unsupported_media_type`)."),
                        "422": _error(
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
                    "parameters": [_JOB_ID],
                    "responses": {
                        "200": {
                            "description": "The translated document, in its own format, as an attachment named "
                            "after the upload with the target language (report.md -> report.en.md).",
                            "content": {
                                media: {"schema": {"type": "string", "format": "binary"}}
                                for media in sorted(set(MEDIA_TYPES.values()))
                            },
                        },
                        "401": _ERRORS["401"],
                        "404": _error("Unknown or expired job, or a job without a document (`not_found`)."),
                        "409": _error("The job has not succeeded (yet), or holds several documents (`conflict`)."),
                        "429": _ERRORS["429"],
                        "503": _ERRORS["503"],
                    },
                }
            },
            "/v1/jobs/{job_id}": {
                "get": {
                    "summary": "Read a job",
                    "parameters": [_JOB_ID],
                    "responses": {
                        "200": _job("The job."),
                        "401": _ERRORS["401"],
                        "404": _error("Unknown or expired job."),
                        "429": _ERRORS["429"],
                        "503": _ERRORS["503"],
                    },
                },
                "delete": {
                    "summary": "Cancel a queued or running job",
                    "parameters": [_JOB_ID],
                    "responses": {
                        "200": _job("The job, now cancelled."),
                        "401": _ERRORS["401"],
                        "404": _error("Unknown or expired job."),
                        "409": _error("The job had already finished (`conflict`)."),
                        "429": _ERRORS["429"],
                        "503": _ERRORS["503"],
                    },
                },
            },
            "/v1/translate": {
                "post": {
                    "summary": "Submit and wait up to `timeout` seconds",
                    "requestBody": json_body(
                        {
                            "allOf": [
                                {"$ref": "#/components/schemas/SubmitRequest"},
                                {
                                    "type": "object",
                                    "properties": {
                                        "timeout": {"type": "number", "minimum": 0, "maximum": settings.wait_timeout}
                                    },
                                },
                            ]
                        }
                    ),
                    "responses": {
                        "200": {
                            "description": "Done in time.",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": ["translations"],
                                        "properties": {"translations": {"type": "array", "items": {"type": "string"}}},
                                    }
                                }
                            },
                        },
                        "202": _job("Not done in time: poll the job.", location=True),
                        **errors_for_submit,
                        **job_failed,
                        "422": _error(
                            "As for POST /v1/jobs, or the job failed because a sentence needs more memory than "
                            "the worker has (`resource_exhausted`)."
                        ),
                    },
                }
            },
            "/api/translate": {
                "post": {
                    "summary": "One text, the call of the single-process services transq replaces",
                    "requestBody": json_body(
                        {
                            "type": "object",
                            "required": ["text"],
                            "properties": {"text": text},
                        }
                    ),
                    "responses": {
                        "200": {
                            "description": "The translation.",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": ["translation", "timestamp"],
                                        "properties": {
                                            "translation": {"type": "string"},
                                            "timestamp": {"type": "string"},
                                        },
                                    }
                                }
                            },
                        },
                        **errors_for_submit,
                        **job_failed,
                        "422": _error(
                            "As for POST /v1/jobs, or the job failed because a sentence needs more memory than "
                            "the worker has (`resource_exhausted`)."
                        ),
                        "504": _error(
                            "No translation within TRANSQ_WAIT_TIMEOUT (`timeout`; the message names the job to "
                            "poll), or the job failed with `timeout`."
                        ),
                    },
                }
            },
            "/v1/languages": {
                "get": {
                    "summary": "The served language pairs, with their models and live workers",
                    "security": [{}],
                    "responses": {
                        "200": {
                            "description": "One entry per pair.",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": ["pairs"],
                                        "properties": {
                                            "pairs": {
                                                "type": "array",
                                                "items": {
                                                    "type": "object",
                                                    "required": ["source_lang", "target_lang", "models", "workers"],
                                                    "properties": {
                                                        "source_lang": {"type": "string"},
                                                        "target_lang": {"type": "string"},
                                                        "models": {"type": "array", "items": {"type": "string"}},
                                                        "workers": {"type": "integer", "minimum": 0},
                                                    },
                                                },
                                            }
                                        },
                                    }
                                }
                            },
                        }
                    },
                }
            },
            "/healthz": {
                "get": {
                    "summary": "Liveness",
                    "security": [{}],
                    "responses": {
                        "200": {
                            "description": "The process is up.",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        }
                    },
                }
            },
            "/readyz": {
                "get": {
                    "summary": "Readiness",
                    "security": [{}],
                    "responses": {
                        "200": {
                            "description": "Redis answers and a worker has its model loaded; `pairs` gives each "
                            "served pair's live workers, `decoding` the live workers by decoding loop (`generate`: the model's "
                            "generation config made the worker fall back to transformers' generate()).",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                        "503": _error("Not ready, with the reason.", retry_after=True),
                    },
                }
            },
            "/metrics": {
                "get": {
                    "summary": "Prometheus metrics",
                    "security": [{}],
                    "responses": {
                        "200": {
                            "description": "Prometheus text format.",
                            "content": {"text/plain": {"schema": {"type": "string"}}},
                        },
                        "503": {
                            "description": "Redis unavailable.",
                            "content": {"text/plain": {"schema": {"type": "string"}}},
                        },
                    },
                }
            },
            "/openapi.json": {
                "get": {
                    "summary": "This document",
                    "security": [{}],
                    "responses": {
                        "200": {
                            "description": "OpenAPI 3.",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        }
                    },
                }
            },
        },
    }


@bp.get("/openapi.json")
def openapi_json():  # type: ignore[no-untyped-def]
    return spec()


_DOCS_SCRIPT = 'SwaggerUIBundle({url: "/openapi.json", dom_id: "#ui"});'
_DOCS_PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><title>transq API</title>
<link rel="stylesheet" href="/docs/static/swagger-ui.css"></head><body><div id="ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script>{_DOCS_SCRIPT}</script></body></html>"""
_DOCS_POLICY = page_policy((_DOCS_SCRIPT,), inline_styles=True)  # Swagger UI sets inline styles


@bp.get("/docs")
def docs():  # type: ignore[no-untyped-def]
    return Response(_DOCS_PAGE, mimetype="text/html", headers={"Content-Security-Policy": _DOCS_POLICY})


@bp.get("/docs/static/<path:name>")
def docs_static(name: str):  # type: ignore[no-untyped-def]
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        abort(404)
    return send_from_directory(swagger_ui_path, name)

"""Every operation of the API: what it takes and what it answers, by the contract's models (api.openapi
assembles /openapi.json from this)."""

from __future__ import annotations

from typing import Any

from shared.contract.compat_paths import compat_paths
from shared.contract.events import EVENTS, event_paths
from shared.contract.glossary_paths import glossary_paths
from shared.contract.memory_paths import memory_paths
from shared.contract.requests import (
    FORM_FIELDS_BYTES,
    DetectRequest,
    DocumentForm,
    JobRequest,
    LegacyRequest,
    TranslateRequest,
)
from shared.contract.responses import (
    ACCEPTED,
    GLOSSARY_MISSING,
    IDEMPOTENCY_KEY,
    JOB_FAILED,
    JOB_ID,
    READ_ERRORS,
    SUBMIT_ERRORS,
    answer,
    error,
    job,
    json_body,
    ref,
)
from shared.contract.service_paths import service_paths
from shared.contract.stored_bodies import CorrectionsBody, GlossaryBody
from shared.contract.views import (
    Corrected,
    Detections,
    ErrorBody,
    Glossaries,
    Glossary,
    Health,
    ImportedMemory,
    JobView,
    LegacyTranslation,
    Memories,
    Readiness,
    ServedLanguages,
    Translations,
    Usage,
)
from shared.document_formats import FORMATS, MEDIA_TYPES
from shared.settings import Settings

REQUESTS = (
    JobRequest,
    TranslateRequest,
    LegacyRequest,
    DocumentForm,
    DetectRequest,
    GlossaryBody,
    CorrectionsBody,
)  # schemas of what is validated
VIEWS = (
    JobView,
    ErrorBody,
    Translations,
    LegacyTranslation,
    ServedLanguages,
    Health,
    Readiness,
    Detections,
    Usage,
    Glossary,
    Glossaries,
    *EVENTS.values(),
    ImportedMemory,
    Memories,
    Corrected,
)


def paths(settings: Settings) -> dict[str, Any]:
    """The paths of /openapi.json."""
    binary = {"type": "string", "format": "binary"}
    return {
        "/v1/jobs": {
            "post": {
                "summary": "Submit a translation job",
                "parameters": [IDEMPOTENCY_KEY],
                "requestBody": json_body(JobRequest),
                "responses": {**ACCEPTED, **SUBMIT_ERRORS, **GLOSSARY_MISSING},
            }
        },
        "/v1/documents": {
            "post": {
                "summary": "Submit a document file (.txt, .md, .html, .srt, .docx, .xlsx, .pptx, .odt, .po, .xlf, .epub) to translate",
                "description": "The file as the `file` field of a multipart form (with optional `format`, "
                "`source_lang` (`auto`: detected by the document stage from the parsed text), `target_lang`, "
                "`callback_url`, `glossary` (JSON text), `glossary_id` and `scores` fields), or as the body itself "
                "(format from the `filename` or `format` query parameter, or the Content-Type; the other fields as "
                "query parameters). Its structure (tags, attributes, code, links, subtitle numbers and timings, "
                "Word runs, tables and styles, an EPUB book's every entry but its text) comes back as it was.",
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
                    **GLOSSARY_MISSING,
                    "400": error("A multipart body without a boundary, or cut short (`bad_request`)."),
                    "413": error(
                        f"The file is over TRANSQ_MAX_DOCUMENT_BYTES ({settings.max_document_bytes}); a form's "
                        f"other fields may take {FORM_FIELDS_BYTES} bytes more (`payload_too_large`)."
                    ),
                    "415": error("A file type transq does not read (`unsupported_media_type`)."),
                    "422": error(
                        "A file that is not UTF-8/UTF-16 text, or a .docx, .xlsx, .pptx, .odt or .epub that is not a zip (`invalid_document`), "
                        "an empty one (`validation_error`), `retranslate` other than a boolean or for a format but PO "
                        "and XLIFF (`validation_error`), or as for POST /v1/jobs. What only parsing finds (a "
                        "broken .docx, a malformed PO or XLIFF file, an XLIFF with a DOCTYPE, a SubRip file without timings, a zip without word/document.xml, an EPUB encrypted for DRM, with entities, a chapter that is not XHTML or a name leading out of the book: "
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
                    **GLOSSARY_MISSING,
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
        **service_paths(),
        **glossary_paths(),
        **event_paths(),
        **memory_paths(),
        **compat_paths(settings),
    }

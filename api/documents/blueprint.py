"""Document upload and download: POST /v1/documents, GET /v1/jobs/<id>/document."""

from __future__ import annotations

from pathlib import PurePosixPath

from flask import Blueprint, Response, request

from api.auth import client_id, owner_id
from api.current import services
from api.documents.download_names import content_disposition, download_name
from api.documents.job_documents import document_info, document_upload, documents_of
from api.glossaries import with_glossary
from api.jobs import job_response, load_job
from api.submission import submit
from api.validation import document_request, parse_document_options, read_body, read_form
from shared.contract import FORM_FIELDS_BYTES, DocumentOptions
from shared.document_formats import (
    EXTENSIONS,
    FILE_EXTENSIONS,
    FILE_FORMATS,
    FORMATS,
    MEDIA_TYPES,
    TRANSLATOR_FORMATS,
    DocumentError,
    decode_text,
)
from shared.errors import (
    Conflict,
    InvalidDocument,
    NotFound,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationError,
)
from shared.store.job_record import Job
from shared.store.job_status import JobStatus

bp = Blueprint("documents", __name__)
_BY_MEDIA_TYPE = {
    "text/plain": "text",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "application/x-subrip": "srt",
    "text/srt": "srt",
    MEDIA_TYPES["docx"]: "docx",
    MEDIA_TYPES["xlsx"]: "xlsx",
    MEDIA_TYPES["pptx"]: "pptx",
    MEDIA_TYPES["odt"]: "odt",
    MEDIA_TYPES["po"]: "po",
    "application/x-gettext": "po",
    MEDIA_TYPES["xliff"]: "xliff",
    "application/x-xliff+xml": "xliff",
    MEDIA_TYPES["epub"]: "epub",
}
_SUPPORTED = ", ".join(sorted(EXTENSIONS))
_FIELDS = ("format", *DocumentOptions.model_fields)  # what a form or a bare body's query may carry


@bp.post("/v1/documents")
def upload_document():  # type: ignore[no-untyped-def]
    """A document file, as the `file` field of a multipart form or as the body itself (its type from the
    file name's extension, the `format` field or the Content-Type): 202 with its job, `parsing` (the
    document stage parses it, off the request path)."""
    fields, data, filename, media_type = read_upload(_FIELDS)
    return job_response(submit_document(fields, data, filename, media_type))


def read_upload(names: tuple[str, ...]) -> tuple[dict[str, str], bytes, str | None, str]:
    """The request's document: (its form fields of `names`, file bytes, file name, media type), within
    TRANSQ_MAX_DOCUMENT_BYTES (413 over it)."""
    limit = services().settings.max_document_bytes
    request.max_content_length = limit + FORM_FIELDS_BYTES  # the form's own fields come on top of the file
    raw = read_body(request, limit + FORM_FIELDS_BYTES, services().settings.request_timeout)
    fields, data, filename, media_type = _file_of(raw, names)
    if len(data) > limit:
        raise PayloadTooLarge(f"the document is over the limit of {limit} bytes")
    return fields, data, filename, media_type


def submit_document(fields: dict[str, str], data: bytes, filename: str | None, media_type: str) -> Job:
    """Validate a document and its options (contract.DocumentOptions, and `format`) and submit its job."""
    settings = services().settings
    if not data.strip():
        raise ValidationError("the document is empty")
    fmt = _format_of(fields.get("format"), filename, media_type)
    try:
        source: str | bytes = data if fmt in FILE_FORMATS else decode_text(data)
    except DocumentError as exc:
        raise InvalidDocument(f"{filename or 'the document'}: {exc}") from None
    upload = document_upload([source], fmt, settings.max_sentence_chars, filename)  # type: ignore[list-item]
    options = parse_document_options({k: v for k, v in fields.items() if k != "format"}, settings)
    if options.get("retranslate") and fmt not in TRANSLATOR_FORMATS:
        raise ValidationError(f"retranslate applies to {' and '.join(TRANSLATOR_FORMATS)} files only, not {fmt}")
    translation = with_glossary(document_request(upload, fmt, options, filename or ""), client_id())
    return submit(services(), translation, request.headers.get("Idempotency-Key"), client_id(), owner_id())


def _file_of(raw: bytes, names: tuple[str, ...]) -> tuple[dict[str, str], bytes, str | None, str]:
    """(form fields of `names`, file bytes, file name, media type) of a multipart form or of a bare body."""
    if request.mimetype == "multipart/form-data":
        fields, upload = read_form(request, raw, names, "the document")
        return fields, upload.read(), upload.filename or None, upload.mimetype or ""
    fields = {key: request.args[key] for key in names if key in request.args}
    return fields, raw, request.args.get("filename"), request.mimetype or ""


def _format_of(named: str | None, filename: str | None, media_type: str) -> str:
    if named:
        if named not in FORMATS:
            raise ValidationError(f"format must be one of {', '.join(FORMATS)}")
        return named
    if filename:
        extension = PurePosixPath(filename).suffix.lower()
        if extension in EXTENSIONS:
            return EXTENSIONS[extension]
    if media_type in _BY_MEDIA_TYPE:
        return _BY_MEDIA_TYPE[media_type]
    raise UnsupportedMediaType(
        f"cannot translate {filename or media_type or 'this file'}: the supported documents are {_SUPPORTED}"
    )


@bp.get("/v1/jobs/<job_id>/document")
def download_document(job_id: str):  # type: ignore[no-untyped-def]
    """The translated document of a succeeded job, in its own format, as an attachment."""
    return translated_document(load_job(job_id))


def translated_document(job: Job) -> Response:
    """A succeeded document job's translated document, as an attachment: 404 for a job of texts, 409 before
    it has succeeded."""
    info = document_info(job)
    if info is None:
        raise NotFound(f"job {job.id} has no document: its translations are in the job itself")
    if job.status != JobStatus.SUCCEEDED:
        raise Conflict(f"job {job.id} is {job.status}: its document is ready once it has succeeded")
    documents = documents_of(job)
    if len(documents) != 1:
        raise Conflict(f"job {job.id} has {len(documents)} documents: they are in the job's result")
    data = documents[0]
    body = data.encode("utf-8") if isinstance(data, str) else data
    name = download_name(info.filename, job.id, FILE_EXTENSIONS[job.format], job.route)
    headers = {"Content-Disposition": content_disposition(name)}
    return Response(body, content_type=MEDIA_TYPES[job.format], headers=headers)  # its charset named once

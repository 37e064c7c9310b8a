"""Read request bodies and validate them with the contract's models (shared.contract); every message names
the field at fault."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flask import Request
from pydantic import ValidationError as PydanticValidationError
from werkzeug.exceptions import HTTPException
from werkzeug.formparser import parse_form_data

from api.connection_guard import BodyTimeout
from api.documents.job_documents import DocumentUpload, document_upload
from shared import contract
from shared.errors import (
    BadRequest,
    InvalidJson,
    PayloadTooLarge,
    RequestTimeout,
    UnsupportedMediaType,
    ValidationError,
)
from shared.settings import Settings
from shared.text.splitter import Segment, split_texts


@dataclass(frozen=True)
class TranslationRequest:
    """A validated request, as submission takes it (api.submission): its texts split into sentences, or a
    document job's layout and sources (parsed by the document stage, not here)."""

    texts: list[str] = field(default_factory=list)
    segments: list[list[Segment]] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    timeout: float | None = None  # POST /v1/translate's wait
    source_lang: str | None = None  # None: not given (any served pair that fits the other field); "auto"
    target_lang: str | None = None
    callback_url: str | None = None  # POSTed the job's view once it is final (worker.callbacks)
    format: str = "text"
    document: str = ""  # a document job's layout (JSON, api.documents.job_documents); its texts come from the stage
    filename: str = ""  # an uploaded document's file name
    source: bytes = b""  # a document job's sources, compressed
    characters: int = 0  # what the client's character quota is charged (shared.store.quota)
    glossary: dict[str, str] | None = None  # its terms (a stored glossary's merged in: api.glossaries)
    glossary_id: str | None = None  # the stored glossary it names
    scores: bool = False  # its result carries each sentence's confidence
    min_confidence: float | None = None  # its quality gate (None: TRANSQ_MIN_CONFIDENCE's)
    on_low_confidence: str = "flag"  # or "withhold"
    translation_memory: list[str] | None = None  # the translation memories it names (api.memories)
    translation_memory_threshold: int = 75  # the lowest fuzzy match score a suggestion has

    def digest(self, pair: str) -> str:
        """What the request asks for, normalised (`text` and a one-item `texts` are the same request, and so
        are a pair named and the same pair left out): an Idempotency-Key reused with a different request
        is refused, not answered with the first job."""
        glossary = sorted((self.glossary or {}).items())
        asked = [self.texts, pair, self.format, self.document, self.callback_url, glossary]
        if self.translation_memory:
            asked += [self.translation_memory, self.translation_memory_threshold]
        gate = [self.min_confidence, self.on_low_confidence] if self.min_confidence is not None else []
        canonical = json.dumps((asked + ["scores"] if self.scores else asked) + gate, ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()


_READ_CHUNK_BYTES = 65536


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _late(exc: TimeoutError, timeout: float) -> str:
    """A body read's timeout as the 408 says it: the connection's own deadline (api.connection_guard), or
    `timeout`."""
    return str(exc) if isinstance(exc, BodyTimeout) else f"the request body was not sent within {timeout:g}s"


def read_body(request: Request, limit: int, timeout: float) -> bytes:
    """The raw body, at most `limit` bytes whether it has a Content-Length or comes chunked: 413 over the
    limit, 400 when its framing is broken (a bad chunk size), 408 when it is not all sent in `timeout`s or
    a read misses the connection's deadline (under gunicorn, api.connection_guard bounds every read)."""
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"the request body is over the limit of {limit} bytes")
    deadline = time.monotonic() + timeout
    parts, size = [], 0
    try:
        while True:
            part = request.stream.read(min(_READ_CHUNK_BYTES, limit + 1 - size))
            if not part:
                break
            parts.append(part)
            size += len(part)
            if size > limit:
                raise PayloadTooLarge(f"the request body is over the limit of {limit} bytes")
            if time.monotonic() > deadline:
                raise RequestTimeout(f"the request body was not sent within {timeout:g}s")
    except (PayloadTooLarge, RequestTimeout):
        raise
    except TimeoutError as exc:
        raise RequestTimeout(_late(exc, timeout)) from None
    except HTTPException as exc:
        if isinstance(exc.__context__, TimeoutError):  # werkzeug's ClientDisconnected, raised on a timed-out read
            raise RequestTimeout(_late(exc.__context__, timeout)) from None
        if exc.code == 413:
            raise PayloadTooLarge(f"the request body is over the limit of {limit} bytes") from None
        raise
    except Exception as exc:  # noqa: BLE001 - the server's own framing errors (bad chunk size, cut body)
        raise BadRequest(f"the request body could not be read: {type(exc).__name__}") from None
    return b"".join(parts)


def read_form(request: Request, raw: bytes, names: tuple[str, ...], the_file: str) -> tuple[dict[str, str], Any]:
    """A multipart form's fields of `names` and its `file` upload (`the_file` says what it is, for the error):
    the body already read (`raw`); a field or file given twice is refused, not guessed."""
    environ = {
        "REQUEST_METHOD": "POST",
        "CONTENT_TYPE": request.content_type or "",
        "CONTENT_LENGTH": str(len(raw)),
        "wsgi.input": io.BytesIO(raw),
    }
    try:
        _, form, files = parse_form_data(environ, silent=False)
    except ValueError as exc:  # no boundary, a truncated or malformed body
        raise BadRequest(f"the multipart/form-data body cannot be read: {exc}") from None
    upload = files.get("file")
    if upload is None:
        raise ValidationError(f"the form has no `file` field ({the_file})")
    twice = [key for key in ("file", *names) if len((files if key == "file" else form).getlist(key)) > 1]
    if twice:  # which one would be meant is a guess: refused, not taken at random
        raise ValidationError(f"the form gives `{twice[0]}` more than once")
    return {key: form[key] for key in names if key in form}, upload


def read_json_object(request: Request, settings: Settings) -> dict[str, Any]:
    """The body as a JSON object: 415 unless JSON, 400 unless valid UTF-8 JSON, 422 unless an object."""
    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise UnsupportedMediaType("Content-Type must be application/json")
    raw = read_body(request, settings.max_body_bytes, settings.request_timeout)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidJson(f"the body is not valid UTF-8 (byte {exc.start})") from None
    try:
        body = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise InvalidJson("the body is not valid JSON: nested too deeply") from None
    except ValueError as exc:
        raise InvalidJson(f"the body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ValidationError("the body must be a JSON object")
    return body


Body = TypeVar("Body", bound=contract.Body)


def validated(model: type[Body], body: Any, settings: Settings | None = None) -> Body:
    """The body as `model`, within the settings' limits: 422 naming the first field at fault."""
    try:
        return model.model_validate(body, context=settings)
    except PydanticValidationError as exc:
        raise ValidationError(contract.refusal(exc)) from None


def parse_translation_request(
    body: Any, settings: Settings, model: type[contract.Texts | contract.LegacyRequest] = contract.JobRequest
) -> TranslationRequest:
    """A JSON body of `model` validated, its texts split into sentences (a document's are parsed off the
    request path, by the document stage), within TRANSQ_MAX_CHARS and TRANSQ_MAX_SENTENCES."""
    checked = validated(model, body, settings)
    texts = checked.items
    fmt = getattr(checked, "format", "text")
    timeout = getattr(checked, "timeout", None)
    languages = {k: getattr(checked, k, None) for k in ("source_lang", "target_lang", "callback_url")}
    extras = {k: getattr(checked, k, None) for k in ("glossary", "glossary_id")}
    extras["scores"] = getattr(checked, "scores", False)
    extras["min_confidence"] = getattr(checked, "min_confidence", None)
    extras["on_low_confidence"] = getattr(checked, "on_low_confidence", "flag")
    memories = getattr(checked, "translation_memory", None)
    if memories:
        extras.update(translation_memory=memories, translation_memory_threshold=checked.translation_memory_threshold)  # type: ignore[union-attr]
    if fmt != "text":
        if memories:
            raise ValidationError("translation_memory applies to plain text jobs (format text) only")
        upload = document_upload(texts, fmt, settings.max_sentence_chars)
        return dataclasses.replace(document_request(upload, fmt, languages), timeout=timeout, **extras)
    total = sum(len(text) for text in texts)
    if total > settings.max_chars:
        raise ValidationError(f"the texts have {total} characters; at most {settings.max_chars} are allowed")
    segments, flat = split_texts(texts, settings, "the texts have")
    return TranslationRequest(
        texts=texts, segments=segments, sentences=flat, timeout=timeout, characters=total, **languages, **extras
    )


def parse_document_options(fields: Any, settings: Settings) -> dict[str, Any]:
    """A document upload's options (contract.DocumentOptions: languages, callback, glossary, scores); None
    where not given."""
    return validated(contract.DocumentOptions, fields, settings).model_dump()


def document_request(
    upload: DocumentUpload, fmt: str, options: dict[str, Any], filename: str = ""
) -> TranslationRequest:
    """A document job's request: its texts (the documents' units) come from the document stage, which
    checks TRANSQ_MAX_CHARS and TRANSQ_MAX_SENTENCES on them (and chooses the route where the languages
    asked for, kept in the layout, leave it to detection)."""
    languages = {"source_lang": options.get("source_lang"), "target_lang": options.get("target_lang")}
    options = dict(options)
    kept = {"retranslate": True} if options.pop("retranslate", False) else {}  # read by the document stage
    layout = json.dumps({**upload.layout, "sha256": upload.digest, **languages, **kept}, ensure_ascii=False)
    return TranslationRequest(
        format=fmt,
        document=layout,
        filename=filename,
        source=upload.packed,
        characters=upload.characters,
        **options,
    )

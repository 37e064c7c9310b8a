"""Parse and validate request bodies; every message names the field at fault."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from flask import Request
from werkzeug.exceptions import HTTPException

from api.documents.formats import TEXT_FORMATS
from api.documents.job_documents import DocumentUpload, document_upload
from api.errors import BadRequest, InvalidJson, PayloadTooLarge, RequestTimeout, UnsupportedMediaType, ValidationError
from shared.settings import Settings
from shared.splitter import Segment, sentences, split_text


@dataclass(frozen=True)
class TranslationRequest:
    texts: list[str]
    segments: list[list[Segment]]
    sentences: list[str]
    single: bool  # the body used `text`, not `texts`
    timeout: float | None = None
    source_lang: str | None = None  # None: not given (any served pair that fits the other field)
    target_lang: str | None = None
    format: str = "text"
    document: str = ""  # a document job's layout (JSON, api.documents.job_documents); its texts come from the stage
    filename: str = ""  # an uploaded document's file name
    source: bytes = b""  # a document job's sources, compressed (parsed by the document stage, not here)

    def digest(self, pair: str) -> str:
        """What the request asks for, normalised (`text` and a one-item `texts` are the same request, and so
        are a pair named and the same pair left out): an Idempotency-Key reused with a different request
        is refused, not answered with the first job."""
        canonical = json.dumps([self.texts, pair, self.format, self.document], ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()


# A text must hold a character outside this class: whitespace by Python's rules and by JSON Schema's
# (ECMA-262) rules together, spelt the same in both languages, so /openapi.json's `pattern` and this
# check agree on every string (Python alone also counts \x1c-\x1f and \x85; ECMA alone \ufeff).
NOT_BLANK = "[^\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"
_NOT_BLANK = re.compile(NOT_BLANK)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def read_body(request: Request, limit: int, timeout: float) -> bytes:
    """The raw body, at most `limit` bytes whether it has a Content-Length or comes chunked: 413 over the
    limit, 400 when its framing is broken (a bad chunk size), 408 when it is not all sent in `timeout`s."""
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"the request body is over the limit of {limit} bytes")
    deadline = time.monotonic() + timeout
    parts, size = [], 0
    try:
        while True:
            part = request.stream.read(min(65536, limit + 1 - size))
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
    except TimeoutError:
        raise RequestTimeout(f"the request body was not sent within {timeout:g}s") from None
    except HTTPException as exc:
        if isinstance(exc.__context__, TimeoutError):  # werkzeug's ClientDisconnected, raised on a timed-out read
            raise RequestTimeout(f"the request body was not sent within {timeout:g}s") from None
        if exc.code == 413:
            raise PayloadTooLarge(f"the request body is over the limit of {limit} bytes") from None
        raise
    except Exception as exc:  # noqa: BLE001 - the server's own framing errors (bad chunk size, cut body)
        raise BadRequest(f"the request body could not be read: {type(exc).__name__}") from None
    return b"".join(parts)


def read_json_object(request: Request, settings: Settings) -> dict[str, Any]:
    """The body as a JSON object: 415 unless JSON, 400 unless valid UTF-8 JSON, 422 unless an object."""
    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise UnsupportedMediaType("Content-Type must be application/json")
    raw = read_body(request, settings.max_body_bytes, settings.read_timeout)
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


def parse_translation_request(
    body: dict[str, Any], settings: Settings, allow_timeout: bool = False
) -> TranslationRequest:
    """Validate `texts` (or `text`), the language pair and the limits."""
    if ("text" in body) == ("texts" in body):
        raise ValidationError("give exactly one of `text` (a string) or `texts` (a list of strings)")
    single = "text" in body
    if single:
        if not isinstance(body["text"], str):
            raise ValidationError("text must be a string")
        texts, names = [body["text"]], ["text"]
    else:
        texts = body["texts"]
        if not isinstance(texts, list):
            raise ValidationError("texts must be a list of strings")
        if not texts:
            raise ValidationError("texts must not be empty")
        if len(texts) > settings.max_texts:
            raise ValidationError(f"texts has {len(texts)} items; at most {settings.max_texts} are allowed")
        names = [f"texts[{i}]" for i in range(len(texts))]
    total = 0
    for name, text in zip(names, texts):
        if not isinstance(text, str):
            raise ValidationError(f"{name} must be a string")
        if not _NOT_BLANK.search(text):
            raise ValidationError(f"{name} is empty")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError(f"{name} contains a lone surrogate, which is not valid Unicode text") from None
        total += len(text)
    fmt = body.get("format", "text")
    if fmt not in TEXT_FORMATS:
        raise ValidationError(f"format must be one of {', '.join(TEXT_FORMATS)} (a .docx file goes to /v1/documents)")
    languages = parse_languages(body)
    if fmt == "text" and total > settings.max_chars:
        raise ValidationError(f"the texts have {total} characters; at most {settings.max_chars} are allowed")
    timeout = None
    if allow_timeout and body.get("timeout") is not None:
        timeout = body["timeout"]
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not 0 <= timeout <= settings.wait_timeout
        ):
            raise ValidationError(f"timeout must be a number of seconds from 0 to {settings.wait_timeout:g}")
    if fmt != "text":  # parsed off the request path, by the document stage
        upload = document_upload(texts, fmt, settings.max_sentence_chars)
        return dataclasses.replace(
            document_request(upload, fmt, languages), timeout=float(timeout) if timeout is not None else None
        )
    segments, flat = _split(texts, settings, "the texts have")
    return TranslationRequest(
        texts,
        segments,
        flat,
        single and fmt == "text",
        float(timeout) if timeout is not None else None,
        languages["source_lang"],
        languages["target_lang"],
    )


def parse_languages(body: Any) -> dict[str, str | None]:
    """`source_lang` and `target_lang`, lower case; None where not given."""
    languages: dict[str, str | None] = {}
    for field in ("source_lang", "target_lang"):
        value = body.get(field)
        if value is not None and not isinstance(value, str):
            raise ValidationError(f"{field} must be a string")
        languages[field] = (value.strip().lower() or None) if value is not None else None
    return languages


def document_request(
    upload: DocumentUpload, fmt: str, languages: dict[str, str | None], filename: str = ""
) -> TranslationRequest:
    """A document job's request: its texts (the documents' units) come from the document stage, which
    checks TRANSQ_MAX_CHARS and TRANSQ_MAX_SENTENCES on them."""
    layout = json.dumps({**upload.layout, "sha256": upload.digest}, ensure_ascii=False)
    return TranslationRequest(
        [],
        [],
        [],
        False,
        None,
        languages["source_lang"],
        languages["target_lang"],
        fmt,
        layout,
        filename,
        upload.packed,
    )


def _split(texts: list[str], settings: Settings, what: str) -> tuple[list[list[Segment]], list[str]]:
    """Each text's segments and all the sentences, within TRANSQ_MAX_SENTENCES."""
    segments = [split_text(text, settings.max_sentence_chars) for text in texts]
    flat = [s for segs in segments for s in sentences(segs)]
    if len(flat) > settings.max_sentences:
        raise ValidationError(f"{what} {len(flat)} sentences; at most {settings.max_sentences} are allowed")
    return segments, flat

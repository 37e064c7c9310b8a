"""Jobs that translate documents: what such a job stores, and its result rebuilt when it is read.

The job's texts are the document's units (its sentences and inline spans, see api.documents); the job
record keeps the source itself, so the translated document is rebuilt from the source and the units'
translations whenever it is read (kept for a while in this process: a finished job never changes).
"""

from __future__ import annotations

import base64
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from api import services
from api.documents import DocumentError, DocumentLimits, DocumentTooComplex, Prepared, prepare
from api.errors import ApiError
from shared.error_codes import ErrorCode
from shared.jobs import SUCCEEDED, Job


class InvalidDocument(ApiError):
    code = ErrorCode.INVALID_DOCUMENT


class TooComplexDocument(ApiError):
    code = ErrorCode.DOCUMENT_TOO_COMPLEX


@dataclass(frozen=True)
class DocumentSources:
    """The documents of one job, parsed, and what the job record keeps of them."""

    units: list[str]
    stored: str  # JSON: format, file name, sources, the sentence length they were split with
    filename: str = ""


def prepare_documents(
    sources: list[str] | list[bytes], fmt: str, names: list[str], max_sentence_chars: int, filename: str | None = None
) -> DocumentSources:
    units: list[str] = []
    counts = []
    for name, source in zip(names, sources):
        try:
            prepared = prepare(fmt, source, max_sentence_chars, _limits())
        except DocumentTooComplex as exc:
            raise TooComplexDocument(f"{name}: {exc}") from None
        except DocumentError as exc:
            raise InvalidDocument(f"{name}: {exc}") from None
        units += prepared.units
        counts.append(len(prepared.units))
    record: dict[str, Any] = {
        "format": fmt,
        "filename": filename,
        "max_sentence_chars": max_sentence_chars,
        "units": counts,
    }
    if fmt == "docx":
        record["docx"] = [base64.b64encode(source).decode() for source in sources]  # type: ignore[arg-type]
    else:
        record["sources"] = sources
    return DocumentSources(units, json.dumps(record, ensure_ascii=False), filename or "")


def documents_of(job: Job) -> list[str | bytes]:
    """The translated documents of a succeeded document job, one per source (rebuilt from the stored source;
    the last few are kept: a finished job never changes)."""
    key = (job.id, job.finished_at or "")
    if key not in _RENDERED:
        _RENDERED[key] = _render(job.format, services().store.document(job.id), job.result or [])
        while len(_RENDERED) > _RENDERED_KEPT:
            _RENDERED.popitem(last=False)
    _RENDERED.move_to_end(key)
    return list(_RENDERED[key])


_RENDERED: OrderedDict[tuple[str, str], tuple[str | bytes, ...]] = OrderedDict()
_RENDERED_KEPT = 4  # documents of up to TRANSQ_MAX_DOCUMENT_BYTES each: a few are enough


def _render(fmt: str, stored: str, translations: list[str]) -> tuple[str | bytes, ...]:
    record = json.loads(stored)
    sources = [base64.b64decode(s) for s in record["docx"]] if fmt == "docx" else record["sources"]
    out, position = [], 0
    for source, count in zip(sources, record["units"]):
        prepared: Prepared = prepare(fmt, source, record["max_sentence_chars"], _limits())
        out.append(prepared.render(translations[position : position + count]))
        position += count
    return tuple(out)


def _limits() -> DocumentLimits:
    return DocumentLimits.from_settings(services().settings)


def public_job(job: Job) -> dict[str, Any]:
    """The job as the API shows it: a document job's result is its translated documents."""
    body = job.public()
    if not job.has_document:
        return body
    body["document"] = {"filename": job.filename or None, "download": f"/v1/jobs/{job.id}/document"}
    if job.status == SUCCEEDED:
        result: dict[str, Any] = {"document_url": f"/v1/jobs/{job.id}/document"}
        if job.format != "docx":
            result["translations"] = documents_of(job)
        body["result"] = result
    return body

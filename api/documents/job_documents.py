"""Jobs that translate documents: what the API stores of an upload, and the translated documents read back.

The API never parses or renders a document: it stores the source compressed (shared.store.document_store) and
the document stage (worker.documents.stage, its own memory- and time-limited process) parses it into the
job's texts (the document's units) and, once they are translated, renders and stores the translated
documents, which the API only reads.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from api.current import services
from shared.contract.job_view import download_url
from shared.document_formats import FILE_FORMATS, ZIP_FORMATS
from shared.errors import InvalidDocument, NotFound
from shared.store.document_store import pack_documents
from shared.store.job_record import Job


@dataclass(frozen=True)
class DocumentUpload:
    """The documents of one job as stored: their layout (JSON, in the job record) and their sources
    (compressed, in a key of their own)."""

    layout: dict[str, Any]
    packed: bytes
    characters: int = 0  # what its client's character quota is charged at upload (a .docx: nothing, yet)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.packed).hexdigest()


def document_upload(
    sources: list[str] | list[bytes], fmt: str, max_sentence_chars: int, filename: str | None = None
) -> DocumentUpload:
    if fmt in ZIP_FORMATS and not all(isinstance(s, bytes) and s.startswith(b"PK") for s in sources):
        raise InvalidDocument(f"{filename or 'the document'}: a .{fmt} file is a zip archive; this is not one")
    layout = {"format": fmt, "filename": filename, "max_sentence_chars": max_sentence_chars, "count": len(sources)}
    # A text document is charged its file's characters now, a file format's (.docx, .po, .xlf) nothing: the
    # document stage settles either to the characters of the text it parses (worker.documents.stage_quota).
    characters = 0 if fmt in FILE_FORMATS else sum(len(source) for source in sources)
    return DocumentUpload(layout, pack_documents(sources), characters)


def documents_of(job: Job) -> list[str | bytes]:
    """The translated documents of a succeeded document job, one per source, as the document stage stored
    them (404 once they have expired)."""
    found = services().documents.translated(job.id, job.format)
    if found is None:
        raise NotFound(f"the translated documents of job {job.id} have expired (TRANSQ_DOCUMENT_TTL)")
    return found


@dataclass(frozen=True)
class DocumentInfo:
    """What the job view shows of a document job's document: its uploaded file name and where it downloads."""

    filename: str | None
    download: str


def document_info(job: Job) -> DocumentInfo | None:
    """The document of a document job; None for a job of texts."""
    if job.document is None:
        return None
    return DocumentInfo(job.document.filename or None, download_url(job.id))

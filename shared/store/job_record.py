"""A job as its Redis hash holds it, and its id: the Job dataclass is the record, its fields the hash's
fields (read and written through shared.store.record_codec, so each field's name and encoding is written
once, here), a document job's document and a callback's delivery included."""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from shared.store.callback_state import Delivery
from shared.store.job_status import JobStatus
from shared.store.record_codec import HashCodec, stored

JOB_ID_PATTERN = "^[0-9a-f]{32}$"  # what new_job_id makes: the API, the document stage and the workers check it
_JOB_ID = re.compile(JOB_ID_PATTERN)


def is_job_id(value: object) -> bool:
    return isinstance(value, str) and _JOB_ID.fullmatch(value) is not None


def new_job_id() -> str:
    """128 random bits, hex: unguessable."""
    return secrets.token_hex(16)


def utc_now() -> str:
    """Now in UTC, ISO 8601 with microseconds and a Z: 2026-01-02T03:04:05.678901Z."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"


@dataclass(frozen=True)
class DocumentRecord:
    """What a document job's record holds of its document: its layout (JSON: format, file name, sizes; the
    units of each document once parsed) and the uploaded file name ('' when none was given). Its sources and
    translations are kept apart (shared.store.document_store)."""

    layout: str = stored(name="document")
    filename: str = stored(default="", sparse=True)


@dataclass
class Job:
    """One job as stored (what the API shows of it: shared.contract.job_view)."""

    id: str
    status: JobStatus
    texts: list[str]
    model: str
    created_at: str
    sentences_total: int
    sentences_done: int = 0
    cached_sentences: int = 0
    started_at: str | None = None
    finished_at: str | None = None
    result: list[str] | None = None
    error: dict[str, str] | None = None
    attempts: int = 0
    submitted: float = stored(default_factory=time.time)
    owner: str = ""  # who created it (an API key's digest) when keys are on; only they can see it
    route: str = ""  # the route (model and settings) that translates it: see shared.routing.routes
    format: str = "text"  # text, html, markdown, srt or docx (worker.documents.formats)
    # translations retried or left suspect
    warnings: list[dict[str, Any]] = stored(default_factory=list, sparse=True)
    # POSTed the job's view once it is final (worker.callbacks); its delivery: `callback`
    callback_url: str = stored(default="", sparse=True)
    # source_lang "auto": {"language", "confidence"}
    detected: dict[str, Any] = stored(default_factory=dict, sparse=True)
    glossary: dict[str, str] = stored(default_factory=dict, sparse=True)  # its glossary's terms (shared.text.glossary)
    want_scores: bool = False  # the request's `scores`: its result carries each sentence's confidence
    scores: list[list[float | None]] | None = None  # once done, with want_scores: per text, its sentences' scores
    min_confidence: float | None = None  # the request's quality gate (None: TRANSQ_MIN_CONFIDENCE's)
    withhold: bool = False  # the request's on_low_confidence "withhold": a sentence still low is returned untranslated
    # once done: per text, each sentence's fidelity record (shared.text.fidelity)
    fidelity: list[list[dict[str, Any]]] = stored(default_factory=list, sparse=True)
    document: DocumentRecord | None = None  # a document job's (None: a job of texts)
    # where each text's segments are (shared.text.splitter.spans_of): the one split, made by the API (or, for
    # a document, the document stage) and read by the worker; it goes with the texts when the job finishes
    spans: list[list[int]] = stored(default_factory=list, sparse=True)
    # the translation memories it names (api.memories): their owner and ids, the fuzzy threshold, the exact
    # matches found at submission (sentence index -> target) and its sentences (normalised: its corrections'
    # sources; kept after it finishes, unlike its texts)
    memory: dict[str, Any] = stored(default_factory=dict, sparse=True)
    from_memory: int = stored(default=0, sparse=True)  # sentences answered by a memory's exact match
    suggestions: list[dict[str, Any]] = stored(default_factory=list, sparse=True)  # fuzzy matches, per sentence
    delivery: Delivery = stored(default_factory=Delivery, written=False)  # written by the outbox's scripts

    @classmethod
    def from_hash(cls, data: dict[str, str]) -> Job:
        return JOB_HASH.decode(data)

    def to_hash(self) -> dict[str, str]:
        return JOB_HASH.encode(self)

    @property
    def callback(self) -> Delivery | None:
        """Its callback's delivery; None for a job without a callback."""
        return self.delivery if self.callback_url else None

    @property
    def finished(self) -> bool:
        return self.status.final


JOB_HASH: HashCodec[Job] = HashCodec(Job)

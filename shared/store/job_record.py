"""A job as its Redis hash holds it (the fields every part reads), and its id."""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from shared.store.callback_state import CALLBACK_FIELDS, delivery_state
from shared.store.job_status import JobStatus

# What a job record is read with: every field Job.from_hash reads (a document job's own fields are read by
# shared.store.document_store).
RECORD_FIELDS = (
    "id status texts model created_at sentences_total sentences_done cached_sentences started_at finished_at "
    "result error attempts submitted owner route format warnings callback_url detected glossary want_scores scores"
).split() + list(CALLBACK_FIELDS)


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
    submitted: float = field(default_factory=time.time)
    owner: str = ""  # who created it (an API key's digest) when keys are on; only they can see it
    route: str = ""  # the route (model and settings) that translates it: see shared.routing.routes
    format: str = "text"  # text, html, markdown, srt or docx (worker.documents.formats)
    warnings: list[dict[str, Any]] = field(default_factory=list)  # translations retried or left suspect
    callback_url: str = ""  # POSTed the job's view once it is final (worker.callbacks)
    callback: dict[str, Any] = field(default_factory=dict)  # that delivery's state (shared.store.callback_state)
    detected: dict[str, Any] = field(default_factory=dict)  # source_lang "auto": {"language", "confidence"}
    glossary: dict[str, str] = field(default_factory=dict)  # its glossary's terms (shared.text.glossary)
    want_scores: bool = False  # the request's `scores`: its result carries each sentence's confidence
    scores: list[list[float | None]] | None = None  # once done, with want_scores: per text, its sentences' scores

    @classmethod
    def from_hash(cls, data: dict[str, str]) -> Job:
        return cls(
            id=data["id"],
            status=JobStatus(data["status"]),
            texts=json.loads(data.get("texts", "[]")),
            model=data.get("model", ""),
            created_at=data.get("created_at", ""),
            sentences_total=int(data.get("sentences_total", 0)),
            sentences_done=int(data.get("sentences_done", 0)),
            cached_sentences=int(data.get("cached_sentences", 0)),
            started_at=data.get("started_at") or None,
            finished_at=data.get("finished_at") or None,
            result=json.loads(data["result"]) if data.get("result") else None,
            error=json.loads(data["error"]) if data.get("error") else None,
            attempts=int(data.get("attempts", 0)),
            submitted=float(data.get("submitted", 0)),
            owner=data.get("owner", ""),
            route=data.get("route", ""),
            format=data.get("format", "text"),
            warnings=json.loads(data["warnings"]) if data.get("warnings") else [],
            callback_url=data.get("callback_url", ""),
            callback=delivery_state(data),
            detected=json.loads(data["detected"]) if data.get("detected") else {},
            glossary=json.loads(data["glossary"]) if data.get("glossary") else {},
            want_scores=data.get("want_scores") == "1",
            scores=json.loads(data["scores"]) if data.get("scores") else None,
        )

    def to_hash(self) -> dict[str, str]:
        fields: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "texts": json.dumps(self.texts, ensure_ascii=False),
            "model": self.model,
            "created_at": self.created_at,
            "sentences_total": self.sentences_total,
            "sentences_done": self.sentences_done,
            "cached_sentences": self.cached_sentences,
            "attempts": self.attempts,
            "submitted": self.submitted,
            "owner": self.owner,
            "route": self.route,
            "format": self.format,
        }
        if self.callback_url:
            fields["callback_url"] = self.callback_url
        if self.detected:
            fields["detected"] = json.dumps(self.detected)
        if self.glossary:
            fields["glossary"] = json.dumps(self.glossary, ensure_ascii=False)
        if self.want_scores:
            fields["want_scores"] = 1
        if self.scores is not None:
            fields["scores"] = json.dumps(self.scores)
        if self.warnings:
            fields["warnings"] = json.dumps(self.warnings, ensure_ascii=False)
        if self.started_at:
            fields["started_at"] = self.started_at
        if self.finished_at:
            fields["finished_at"] = self.finished_at
        if self.result is not None:
            fields["result"] = json.dumps(self.result, ensure_ascii=False)
        if self.error is not None:
            fields["error"] = json.dumps(self.error)
        return {k: str(v) for k, v in fields.items()}

    @property
    def finished(self) -> bool:
        return self.status.final

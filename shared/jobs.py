"""Job records in Redis; every status change is one atomic Lua script, so status only moves forward."""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import redis

from shared.callback_state import CALLBACK_FIELDS, delivery_state
from shared.error_codes import ErrorCode
from shared.job_scripts import CLAIM, CREATE, FORGET, LAPSED, PARK, PROGRESS, RELEASE, RENEW, TRANSITION
from shared.job_status import ClaimOutcome, Creation, JobStatus, Move
from shared.keys import Keys

# What a job record is read with: every field Job.from_hash reads (a document job's own fields are read by
# shared.document_store).
_RECORD_FIELDS = (
    "id status texts model created_at sentences_total sentences_done cached_sentences started_at finished_at "
    "result error attempts submitted owner route format warnings callback_url detected glossary"
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
    """One job as stored (what the API shows of it: api.job_view)."""

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
    route: str = ""  # the route (model and settings) that translates it: see shared.routes
    format: str = "text"  # text, html, markdown, srt or docx (api.documents.formats)
    warnings: list[dict[str, Any]] = field(default_factory=list)  # translations retried or left suspect
    callback_url: str = ""  # POSTed the job's view once it is final (worker.callbacks)
    callback: dict[str, Any] = field(default_factory=dict)  # that delivery's state (shared.callback_state)
    detected: dict[str, Any] = field(default_factory=dict)  # source_lang "auto": {"language", "confidence"}
    glossary: dict[str, str] = field(default_factory=dict)  # its glossary's terms (shared.glossary)

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


@dataclass(frozen=True)
class Idempotency:
    """An Idempotency-Key as stored: its Redis key and the digest of the request it was first sent with."""

    key: str
    request_digest: str
    ttl: int


@dataclass(frozen=True)
class Created:
    """What create() did; for Creation.EXISTS the job the idempotency key names, first sent with a request of
    `request_digest`."""

    outcome: Creation
    job_id: str = ""
    request_digest: str = ""
    held_bytes: int = 0  # 'over_quota': what the client holds, and when the first of it expires
    retry_after: int = 0


@dataclass(frozen=True)
class Usage:
    """A client's storage account (shared.keys.Keys.usage) and its limit in bytes (0: none)."""

    key: str
    limit: int


@dataclass(frozen=True)
class Claim:
    """The outcome of trying to take a job: claimed, leased (someone else runs it), final, missing or lost;
    a claimed job's `fence`, which every later write of the claimant for it carries (job_scripts._FENCE)."""

    outcome: ClaimOutcome
    attempts: int = 0
    fence: int = 0


class JobStore:
    """Create, read and move jobs forward in Redis."""

    def __init__(self, client: redis.Redis, keys: Keys, job_ttl: int, result_ttl: int):
        self.client = client
        self.keys = keys
        self.job_ttl = job_ttl
        self.result_ttl = result_ttl
        self._create = client.register_script(CREATE)
        self._transition = client.register_script(TRANSITION)
        self._claim = client.register_script(CLAIM)
        self._renew = client.register_script(RENEW)
        self._park = client.register_script(PARK)
        self._progress = client.register_script(PROGRESS)
        self._forget = client.register_script(FORGET)
        self._release = client.register_script(RELEASE)
        self._lapsed = client.register_script(LAPSED)

    # --- the API side -------------------------------------------------------------

    def create(
        self,
        job: Job,
        idempotency: Idempotency | None = None,
        max_queue: int = 0,
        usage: Usage | None = None,
        document_source: bytes = b"",
        document_ttl: int = 0,
        record_fields: dict[str, str] | None = None,
    ) -> Created:
        """Store a job in one atomic call: a queued one joins its route's pending set (unless `max_queue`
        jobs already wait there), a finished one gets the result TTL; the idempotency key is set in the
        same call, unless it already names a job. A document job (status parsing) stores its compressed
        source for `document_ttl`s, and `record_fields` (its layout and file name: shared.document_store) in
        its record. With `usage`, the job's bytes count against its client's storage limit
        ('over_quota', nothing written, when it would go over)."""
        waiting = job.status in (JobStatus.QUEUED, JobStatus.PARSING)
        args: list[Any] = [
            self.job_ttl if waiting else self.result_ttl,
            repr(job.submitted) if job.status == JobStatus.QUEUED else "",
            job.id,
            max_queue,
            f"{idempotency.ttl} {idempotency.request_digest}" if idempotency else "",
            self.keys.job(""),
            f"{usage.key} {usage.limit} {document_ttl or self.job_ttl}" if usage else "",
            document_source,
        ]
        for pair in {**job.to_hash(), **(record_fields or {})}.items():
            args.extend(pair)
        idem_key = idempotency.key if idempotency else self.keys.job(job.id)
        keys = [
            self.keys.job(job.id),
            self.keys.pending(job.route),
            idem_key,
            self.keys.document_source(job.id),
            self.keys.callbacks_due,
        ]
        outcome, existing = self._create(keys=keys, args=args)
        if outcome == Creation.EXISTS:
            job_id, _, digest = existing.partition(" ")
            return Created(Creation.EXISTS, job_id, digest)
        if outcome == Creation.OVER_QUOTA:
            held, retry_after = existing.split()
            return Created(Creation.OVER_QUOTA, held_bytes=int(held), retry_after=int(retry_after))
        return Created(Creation(outcome), job.id if outcome == Creation.CREATED else "")

    def delete(self, job: Job, idempotency_key: str | None = None) -> None:
        """Remove a job whose message could not be sent (its idempotency key, its document, what it held of
        its client's storage), so nothing is half-written."""
        keys = [
            self.keys.job(job.id),
            self.keys.pending(job.route),
            idempotency_key or "",
            self.keys.document_source(job.id),
        ]
        self._forget(keys=keys, args=[job.id])

    def get(self, job_id: str) -> Job | None:
        return self.get_many([job_id])[0]

    def get_many(self, job_ids: list[str]) -> list[Job | None]:
        pipe = self.client.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hmget(self.keys.job(job_id), _RECORD_FIELDS)
        jobs: list[Job | None] = []
        for values in pipe.execute():
            data = {name: value for name, value in zip(_RECORD_FIELDS, values) if value is not None}
            jobs.append(Job.from_hash(data) if data.get("status") else None)
        return jobs

    def statuses(self, job_ids: list[str]) -> list[str | None]:
        pipe = self.client.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hget(self.keys.job(job_id), "status")
        return list(pipe.execute())

    def sizes(self, job_ids: list[str]) -> list[int]:
        """Each job's number of sentences (0 for a job that is gone)."""
        pipe = self.client.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hget(self.keys.job(job_id), "sentences_total")
        return [int(size or 0) for size in pipe.execute()]

    def queue_sizes(self, routes: list[str]) -> tuple[int, int]:
        """Jobs waiting in these routes' pending sets, and messages on their Celery queues."""
        pipe = self.client.pipeline(transaction=False)
        for route in routes:
            pipe.zcard(self.keys.pending(route))
            pipe.llen(self.keys.queue(route))
        sizes = pipe.execute()
        return sum(sizes[0::2]), sum(sizes[1::2])

    def pending_count(self, route: str) -> int:
        return int(self.client.zcard(self.keys.pending(route)))

    def cancel(self, job_id: str) -> Move:
        """OK when cancelled now, REFUSED when already final, MISSING when unknown."""
        return self._move(job_id, JobStatus.CANCELLED, {}, None)

    # --- the worker side ----------------------------------------------------------

    def claim(
        self,
        job_id: str,
        route: str,
        worker: str,
        lease_seconds: float,
        max_deliveries: int,
        fresh_only: bool = False,
        lapse_is_loss: bool = True,
    ) -> Claim:
        error = json.dumps(
            {
                "code": ErrorCode.WORKER_LOST.value,
                "message": f"the worker died {max_deliveries} times while running this job",
            }
        )
        outcome, attempts, *fence = self._claim(
            keys=[
                self.keys.job(job_id),
                self.keys.pending(route),
                self.keys.lease(job_id),
                self.keys.running(route),
                self.keys.callbacks_due,
                self.keys.stats,
            ],
            args=[
                job_id,
                worker,
                int(lease_seconds * 1000),
                utc_now(),
                max_deliveries,
                int(fresh_only),
                self.result_ttl,
                error,
                int(lapse_is_loss),
            ],
        )
        return Claim(ClaimOutcome(outcome), int(attempts), int(fence[0]) if fence else 0)

    def oldest_pending(self, route: str, limit: int) -> list[str]:
        return list(self.client.zrange(self.keys.pending(route), 0, limit - 1))

    def waiting_since(self, route: str, before: float, limit: int) -> list[str]:
        """A route's queued jobs that have waited since before `before` (unix seconds), oldest first."""
        return list(self.client.zrangebyscore(self.keys.pending(route), "-inf", before, start=0, num=limit))

    def mark_woken(self, job_id: str, ttl_seconds: int) -> bool:
        """True for the one caller that may send this job a new wake-up: none is on its way (marked within
        `ttl_seconds` and not yet taken off the queue)."""
        return bool(self.client.set(self.keys.wake(job_id), "1", nx=True, ex=ttl_seconds))

    def woken(self, job_id: str) -> None:
        """A message of this job was taken off the queue: the next park or sweep may send another."""
        self.client.delete(self.keys.wake(job_id))

    def renew_leases(self, fences: dict[str, int], worker: str, lease_seconds: float) -> int:
        """Renew the leases of the jobs this worker claimed (job id -> its claim's fence)."""
        keys = [key for j in fences for key in (self.keys.lease(j), self.keys.job(j))]
        if not keys:
            return 0
        return int(self._renew(keys=keys, args=[worker, int(lease_seconds * 1000), *fences.values()]))

    def holder(self, job_id: str) -> tuple[str, int]:
        """The worker that claimed the job last, and its claim's fence ('' and 0: never claimed)."""
        worker, fence = self.client.hmget(self.keys.job(job_id), ["worker", "fence"])
        return worker or "", int(fence or 0)

    def drop_lease(self, job_id: str, fence: int) -> None:
        """Let a running job's lease go, so that its next claim counts a lost delivery (unless it was
        claimed again since `fence`)."""
        self._release(keys=[self.keys.job(job_id), self.keys.lease(job_id)], args=[fence])

    def lapsed(self, route: str, limit: int) -> list[str]:
        """A route's running jobs whose lease lapsed and that nobody claimed since (see job_scripts.LAPSED)."""
        return list(self._lapsed(keys=[self.keys.running(route)], args=[self.keys.job(""), self.keys.lease(""), limit]))

    def park(self, job_id: str, route: str, worker: str, fence: int) -> bool:
        """Give a job this worker runs back to its route's pending set (see _PARK); False if it was not ours."""
        keys = [self.keys.job(job_id), self.keys.pending(route), self.keys.lease(job_id)]
        return bool(self._park(keys=keys, args=[job_id, worker, fence]))

    def set_progress(
        self,
        job_id: str,
        fence: int,
        sentences_done: int,
        cached: int = 0,
        new: dict[int, str] | None = None,
        warnings: list[dict[str, Any]] | None = None,
    ) -> Move:
        """Record progress and the job's `new` translations (by sentence index), kept until it is final so
        that a parked or redelivered job resumes where it was, whatever the sentence cache holds; and its
        `warnings` (all of them) when given. 'ok'; 'fenced' (claimed again since `fence`: nothing written);
        'stopped' (not running)."""
        args: list[Any] = [
            sentences_done,
            cached,
            self.job_ttl,
            json.dumps(warnings, ensure_ascii=False) if warnings else "",
            fence,
        ]
        for index, translation in (new or {}).items():
            args += [index, translation]
        return Move(self._progress(keys=[self.keys.job(job_id), self.keys.partial(job_id)], args=args))

    def partial_translations(self, job_ids: list[str]) -> list[dict[int, str]]:
        """The translations recorded so far of each job, by sentence index."""
        pipe = self.client.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hgetall(self.keys.partial(job_id))
        return [{int(i): t for i, t in found.items()} for found in pipe.execute()]

    def succeed(
        self,
        job_id: str,
        fence: int | None,
        translations: list[str],
        cached_sentences: int,
        sentences_done: int,
        warnings: list[dict[str, Any]] | None = None,
    ) -> Move:
        fields = _result_fields(translations, cached_sentences, sentences_done, warnings)
        return self._move(job_id, JobStatus.SUCCEEDED, fields, fence)

    def translated(
        self,
        job_id: str,
        translations: list[str],
        cached_sentences: int,
        sentences_done: int,
        warnings: list[dict[str, Any]] | None = None,
        fence: int | None = None,
    ) -> Move:
        """A document job's units are translated: it waits for the document stage to render it."""
        fields = _result_fields(translations, cached_sentences, sentences_done, warnings)
        return self._move(job_id, JobStatus.RENDERING, fields, fence, ttl=self.job_ttl)

    def fail(self, job_id: str, code: ErrorCode, message: str, fence: int | None = None) -> Move:
        """Fail a job, with the fence of the claim that fails it (None: unfenced, as the API and the document
        stage do). Every failure counts in the `jobs_failed` statistic, in the same atomic call (so does a
        claim that fails a job as lost)."""
        return self._move(
            job_id, JobStatus.FAILED, {"error": json.dumps({"code": code.value, "message": message})}, fence
        )

    def _move(self, job_id: str, status: JobStatus, fields: dict[str, str], fence: int | None, ttl: int = 0) -> Move:
        """'ok'; 'refused' (already final), 'missing', or 'fenced' (claimed again since `fence`; None: any)."""
        args: list[str] = [
            job_id,
            status,
            utc_now(),
            str(ttl or self.result_ttl),
            self.keys.pending(""),
            "" if fence is None else str(fence),
        ]
        for name, value in fields.items():
            args += [name, value]
        keys = [
            self.keys.job(job_id),
            self.keys.lease(job_id),
            self.keys.partial(job_id),
            self.keys.document_source(job_id),
            self.keys.callbacks_due,
            self.keys.stats,
        ]
        outcome, _ = self._transition(keys=keys, args=args)
        return Move(outcome)


def _result_fields(
    translations: list[str], cached_sentences: int, sentences_done: int, warnings: list[dict[str, Any]] | None
) -> dict[str, str]:
    """What a job's record holds once its translation is done (succeeded, or rendering for a document)."""
    fields = {
        "result": json.dumps(translations, ensure_ascii=False),
        "cached_sentences": str(cached_sentences),
        "sentences_done": str(sentences_done),
    }
    if warnings:
        fields["warnings"] = json.dumps(warnings, ensure_ascii=False)
    return fields

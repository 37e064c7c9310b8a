"""A job's life in Redis as the API and the document stage see it: created (with its idempotency key, queue
cap and storage account), read, and moved forward (cancelled, failed, translated), each change one atomic Lua
script (shared.store.job_scripts), so status only moves forward. A worker's claims, leases and progress on
the jobs it runs are shared.store.job_claims.JobClaims."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import redis

from shared.errors import ErrorCode
from shared.store.job_events import Sentences
from shared.store.job_record import JOB_HASH, Job, utc_now
from shared.store.job_scripts import CREATE, FORGET, TRANSITION
from shared.store.job_status import Creation, JobStatus, Move
from shared.store.keys import Keys


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
    """A client's storage account (shared.store.keys.Keys.usage) and its limit in bytes (0: none)."""

    key: str
    limit: int


@dataclass(frozen=True)
class Translation:
    """A job's translation, complete: what its record keeps of it (fields of Job, encoded as the record's)."""

    result: list[str]  # one translation per text (a document job's: per unit)
    sentences_done: int
    cached_sentences: int = 0
    warnings: list[dict[str, Any]] = field(default_factory=list)
    scores: list[list[float | None]] | None = None  # each text's sentences' confidences, when the job asked
    suggestions: list[dict[str, Any]] = field(default_factory=list)  # fuzzy memory matches: {sentence, matches}
    fidelity: list[list[dict[str, Any]]] = field(default_factory=list)  # each sentence's record (shared.text.fidelity)


class JobStore:
    """Create, read and move jobs forward in Redis."""

    def __init__(self, client: redis.Redis, keys: Keys, job_ttl: int, result_ttl: int):
        self.client = client
        self.keys = keys
        self.job_ttl = job_ttl
        self.result_ttl = result_ttl
        self._create = client.register_script(CREATE)
        self._transition = client.register_script(TRANSITION)
        self._forget = client.register_script(FORGET)

    def create(
        self,
        job: Job,
        idempotency: Idempotency | None = None,
        max_queue: int = 0,
        usage: Usage | None = None,
        document_source: bytes = b"",
        document_ttl: int = 0,
        cached: Sentences | None = None,
    ) -> Created:
        """Store a job in one atomic call: a queued one joins its route's pending set (unless `max_queue`
        jobs already wait there), a finished one gets the result TTL; the idempotency key is set in the
        same call, unless it already names a job. A document job (status parsing, its `document` in its
        record) stores its compressed source for `document_ttl`s. With `usage`, the job's bytes count
        against its client's storage limit ('over_quota', nothing written, when it would go over). The
        sentences the cache answered (`cached`) are recorded as a worker records its own (a waiting job's in its
        partial hash) with their events, which the job's status and progress follow."""
        waiting = job.status in (JobStatus.QUEUED, JobStatus.PARSING)
        partial = cached.partial_fields() if cached and waiting else []
        events = cached.events() if cached else []
        args: list[Any] = [
            self.job_ttl if waiting else self.result_ttl,
            repr(job.submitted) if job.status == JobStatus.QUEUED else "",
            job.id,
            max_queue,
            idempotency.ttl if idempotency else "",
            idempotency.request_digest if idempotency else "",
            self.keys.job(""),
            usage.key if usage else "",
            usage.limit if usage else 0,
            document_ttl or self.job_ttl,
            document_source,
            len(partial),
            len(events),
            *partial,
            *events,
        ]
        for pair in job.to_hash().items():
            args.extend(pair)
        keys = [
            self.keys.job(job.id),
            self.keys.pending(job.route),
            idempotency.key if idempotency else self.keys.job(job.id),
            self.keys.document_source(job.id),
            self.keys.callbacks_due,
            self.keys.partial(job.id),
            self.keys.events(job.id),
            self.keys.taken_back(job.id),
        ]
        outcome, *found = self._create(keys=keys, args=args)
        if outcome == Creation.EXISTS:
            job_id, digest = found
            return Created(Creation.EXISTS, job_id, digest)
        if outcome == Creation.OVER_QUOTA:
            held, retry_after = found
            return Created(Creation.OVER_QUOTA, held_bytes=int(held), retry_after=int(retry_after))
        return Created(Creation(outcome), job.id if outcome == Creation.CREATED else "")

    def idempotent(self, idempotency_key: str) -> tuple[str, str] | None:
        """The job an idempotency key names and the digest of the request it was first sent with (a read:
        create() checks the key again, atomically); None when the key is unused or has expired."""
        found = self.client.get(idempotency_key)
        job_id, _, digest = (found or "").partition(" ")
        return (job_id, digest) if job_id and digest else None

    def delete(self, job: Job, idempotency_key: str | None = None) -> None:
        """Remove a job whose message could not be sent (its idempotency key, its document, what it held of
        its client's storage), so nothing is half-written; a tombstone makes a create of it still on its way
        write nothing (Creation.TAKEN_BACK)."""
        keys = [
            self.keys.job(job.id),
            self.keys.pending(job.route),
            idempotency_key or "",
            self.keys.document_source(job.id),
            self.keys.events(job.id),
            self.keys.taken_back(job.id),
        ]
        self._forget(keys=keys, args=[job.id, self.job_ttl])

    def get(self, job_id: str) -> Job | None:
        return self.get_many([job_id])[0]

    def get_many(self, job_ids: list[str]) -> list[Job | None]:
        """Each job's record, one HGETALL each (None for a job that is gone)."""
        pipe = self.client.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hgetall(self.keys.job(job_id))
        return [Job.from_hash(data) if data.get("status") else None for data in pipe.execute()]

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

    def translated(self, job: Job, fence: int | None, translation: Translation, last: Sentences | None = None) -> Move:
        """Store a job's complete translation, with the fence of the claim that made it: a job of texts
        succeeds; a document job (its `document`) waits for the document stage to render it (rendering). The
        sentences not yet recorded with its progress (`last`) get their events in the same call."""
        fields = JOB_HASH.encode_part(translation)
        events = last.events() if last else []
        if job.document is None:
            return self._move(job.id, JobStatus.SUCCEEDED, fields, fence, events=events)
        return self._move(job.id, JobStatus.RENDERING, fields, fence, ttl=self.job_ttl, events=events)

    def fail(self, job_id: str, code: ErrorCode, message: str, fence: int | None = None) -> Move:
        """Fail a job, with the fence of the claim that fails it (None: unfenced, as the API and the document
        stage do). Every failure counts in the `jobs_failed` statistic, in the same atomic call (so does a
        claim that fails a job as lost)."""
        error = JOB_HASH.encode_values(error={"code": code.value, "message": message})
        return self._move(job_id, JobStatus.FAILED, error, fence)

    def _move(
        self,
        job_id: str,
        status: JobStatus,
        fields: dict[str, str],
        fence: int | None,
        ttl: int = 0,
        events: list[str] | None = None,
    ) -> Move:
        """'ok'; 'refused' (already final), 'missing', or 'fenced' (claimed again since `fence`; None: any)."""
        args: list[str] = [
            job_id,
            status,
            utc_now(),
            str(ttl or self.result_ttl),
            self.keys.pending(""),
            "" if fence is None else str(fence),
            str(len(events or [])),
            *(events or []),
        ]
        for pair in fields.items():
            args.extend(pair)
        keys = [
            self.keys.job(job_id),
            self.keys.lease(job_id),
            self.keys.partial(job_id),
            self.keys.document_source(job_id),
            self.keys.callbacks_due,
            self.keys.stats,
            self.keys.events(job_id),
        ]
        outcome, _ = self._transition(keys=keys, args=args)
        return Move(outcome)

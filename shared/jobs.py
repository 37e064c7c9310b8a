"""Job records in Redis; every status change is one atomic Lua script, so status only moves forward."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

import redis

from shared.keys import Keys

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = "queued", "running", "succeeded", "failed", "cancelled"
FINAL_STATUSES = (SUCCEEDED, FAILED, CANCELLED)

# Shared by the scripts: rank of each status; a transition must raise the rank.
_RANKS = "local rank = {queued=0, running=1, succeeded=2, failed=2, cancelled=2}\n"

# KEYS: job, pending, stats. ARGV: ttl, pending score ('' when not queued), id, the number of counters,
# counter/amount pairs, then field/value pairs. One command, flat arguments (nothing to decode): cheap to
# send and to run, and atomic (nothing is half-written, even on OOM).
_CREATE = """
redis.call('HSET', KEYS[1], unpack(ARGV, 5 + 2 * tonumber(ARGV[4])))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]))
if ARGV[2] ~= '' then redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3]) end
for i = 5, 4 + 2 * tonumber(ARGV[4]), 2 do redis.call('HINCRBY', KEYS[3], ARGV[i], ARGV[i + 1]) end
return 1
"""

# KEYS: job, pending, lease. ARGV: id, new status, now, ttl, then field/value pairs.
_TRANSITION = (
    _RANKS
    + """
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return {'missing', ''} end
if rank[ARGV[2]] <= rank[current] then return {'refused', current} end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if rank[ARGV[2]] == 2 then
  redis.call('HSET', KEYS[1], 'finished_at', ARGV[3])
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('DEL', KEYS[3])
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return {'ok', ARGV[2]}
"""
)

# KEYS: job, pending, lease. ARGV: id, worker, lease ms, now, max lost deliveries,
# fresh only (1: claim queued jobs only), result ttl, worker_lost error JSON.
_CLAIM = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {'missing', 0}
end
if status == 'running' then
  if ARGV[6] == '1' or redis.call('EXISTS', KEYS[3]) == 1 then return {'leased', 0} end
elseif status ~= 'queued' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {'final', 0}
end
redis.call('ZREM', KEYS[2], ARGV[1])
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if attempts - 1 >= tonumber(ARGV[5]) then
  redis.call('HSET', KEYS[1], 'status', 'failed', 'error', ARGV[8], 'finished_at', ARGV[4])
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7]))
  redis.call('DEL', KEYS[3])
  return {'lost', attempts}
end
if status == 'queued' then redis.call('HSET', KEYS[1], 'status', 'running', 'started_at', ARGV[4]) end
redis.call('HSET', KEYS[1], 'worker', ARGV[2])
redis.call('SET', KEYS[3], ARGV[2], 'PX', tonumber(ARGV[3]))
return {'claimed', attempts}
"""

# KEYS: leases. ARGV: worker, lease ms. Renews only the leases this worker holds.
_RENEW = """
local renewed = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, tonumber(ARGV[2]))
    renewed = renewed + 1
  end
end
return renewed
"""

# KEYS: job, lease. ARGV: worker. Gives a claimed job back without counting a lost delivery.
_RELEASE = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
if redis.call('HGET', KEYS[1], 'status') == 'running' then redis.call('HINCRBY', KEYS[1], 'attempts', -1) end
return 1
"""

# KEYS: job. ARGV: sentences done so far. Never recreates an expired record.
_PROGRESS = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'sentences_done', ARGV[1])
return 1
"""


def new_job_id() -> str:
    """128 random bits, hex: unguessable."""
    return secrets.token_hex(16)


def utc_now() -> str:
    """Now in UTC, ISO 8601 with microseconds and a Z: 2026-01-02T03:04:05.678901Z."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"


@dataclass
class Job:
    """One job as stored; `public()` is what the API returns."""

    id: str
    status: str
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

    @classmethod
    def from_hash(cls, data: dict[str, str]) -> Job:
        return cls(
            id=data["id"],
            status=data["status"],
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
        }
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
        return self.status in FINAL_STATUSES

    def public(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "progress": {"sentences_done": self.sentences_done, "sentences_total": self.sentences_total},
            "cached_sentences": self.cached_sentences,
            "model": self.model,
        }
        if self.status == SUCCEEDED:
            body["result"] = {"translations": self.result or []}
        if self.status == FAILED:
            body["error"] = self.error or {"code": "internal_error", "message": "the job failed"}
        return body


@dataclass(frozen=True)
class Claim:
    """The outcome of trying to take a job: claimed, leased (someone else runs it), final, missing or lost."""

    outcome: str
    attempts: int = 0


class JobStore:
    """Create, read and move jobs forward in Redis."""

    def __init__(self, client: redis.Redis, keys: Keys, job_ttl: int, result_ttl: int):
        self.client = client
        self.keys = keys
        self.job_ttl = job_ttl
        self.result_ttl = result_ttl
        self._create = client.register_script(_CREATE)
        self._transition = client.register_script(_TRANSITION)
        self._claim = client.register_script(_CLAIM)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._progress = client.register_script(_PROGRESS)

    # --- the API side -------------------------------------------------------------

    def create(self, job: Job, counters: dict[str, int] | None = None) -> None:
        """Store a job in one atomic call: a queued one joins the pending set, a finished one gets the
        result TTL; `counters` are added to the stats hash in the same call."""
        queued = job.status == QUEUED
        counters = counters or {}
        args: list[Any] = [
            self.job_ttl if queued else self.result_ttl,
            repr(job.submitted) if queued else "",
            job.id,
            len(counters),
        ]
        for pair in (*counters.items(), *job.to_hash().items()):
            args.extend(pair)
        self._create(keys=[self.keys.job(job.id), self.keys.pending, self.keys.stats], args=args)

    def delete(self, job_id: str) -> None:
        """Remove a job whose message could not be sent, so nothing is half-written."""
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(self.keys.job(job_id))
        pipe.zrem(self.keys.pending, job_id)
        pipe.execute()

    def get(self, job_id: str) -> Job | None:
        data = self.client.hgetall(self.keys.job(job_id))
        return Job.from_hash(data) if data.get("status") else None

    def pending_count(self) -> int:
        return int(self.client.zcard(self.keys.pending))

    def cancel(self, job_id: str) -> str:
        """'ok' when cancelled now, 'refused' when already final, 'missing' when unknown."""
        return self._move(job_id, CANCELLED, {})

    # --- the worker side ----------------------------------------------------------

    def claim(
        self, job_id: str, worker: str, lease_seconds: float, max_deliveries: int, fresh_only: bool = False
    ) -> Claim:
        error = json.dumps(
            {"code": "worker_lost", "message": f"the worker died {max_deliveries} times while running this job"}
        )
        outcome, attempts = self._claim(
            keys=[self.keys.job(job_id), self.keys.pending, self.keys.lease(job_id)],
            args=[
                job_id,
                worker,
                int(lease_seconds * 1000),
                utc_now(),
                max_deliveries,
                int(fresh_only),
                self.result_ttl,
                error,
            ],
        )
        return Claim(outcome, int(attempts))

    def oldest_pending(self, limit: int) -> list[str]:
        return list(self.client.zrange(self.keys.pending, 0, limit - 1))

    def renew_leases(self, job_ids: Iterable[str], worker: str, lease_seconds: float) -> int:
        keys = [self.keys.lease(j) for j in job_ids]
        if not keys:
            return 0
        return int(self._renew(keys=keys, args=[worker, int(lease_seconds * 1000)]))

    def release(self, job_id: str, worker: str) -> bool:
        return bool(self._release(keys=[self.keys.job(job_id), self.keys.lease(job_id)], args=[worker]))

    def set_progress(self, job_id: str, sentences_done: int) -> None:
        self._progress(keys=[self.keys.job(job_id)], args=[sentences_done])

    def succeed(self, job_id: str, translations: list[str], cached_sentences: int, sentences_done: int) -> str:
        return self._move(
            job_id,
            SUCCEEDED,
            {
                "result": json.dumps(translations, ensure_ascii=False),
                "cached_sentences": str(cached_sentences),
                "sentences_done": str(sentences_done),
            },
        )

    def fail(self, job_id: str, code: str, message: str) -> str:
        return self._move(job_id, FAILED, {"error": json.dumps({"code": code, "message": message})})

    def _move(self, job_id: str, status: str, fields: dict[str, str]) -> str:
        args: list[str] = [job_id, status, utc_now(), str(self.result_ttl)]
        for name, value in fields.items():
            args += [name, value]
        outcome, _ = self._transition(
            keys=[self.keys.job(job_id), self.keys.pending, self.keys.lease(job_id)], args=args
        )
        return outcome

"""A worker's hold on the jobs it runs, in Redis: claiming a job (with a lease and a fence), renewing and
dropping leases, finding lapsed ones, parking a job, recording its progress (and reading it back when the
job resumes), and the wake-ups of waiting jobs. Each change is one atomic script (shared.store.claim_scripts).
The job's record and its status moves are shared.store.jobs.JobStore's."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import redis

from shared.errors import ErrorCode
from shared.store.claim_scripts import CLAIM, LAPSED, PARK, PROGRESS, RELEASE, RENEW
from shared.store.job_events import FIDELITY_PREFIX, SCORE_PREFIX, Sentences
from shared.store.job_record import JOB_HASH, utc_now
from shared.store.job_status import ClaimOutcome, Move
from shared.store.keys import Keys


@dataclass(frozen=True)
class Claimant:
    """Who claims a job and on what terms: its route and worker id, the lease it takes, the lost deliveries
    after which a job fails `worker_lost`, and whether a lapsed lease counts as a lost delivery (not while the
    claimant itself just saw the broker in trouble: the holder may be alive)."""

    route: str
    worker: str
    lease_seconds: float
    max_deliveries: int
    lapse_is_loss: bool = True


@dataclass(frozen=True)
class Claim:
    """The outcome of trying to take a job: claimed, leased (someone else runs it), final, missing or lost;
    a claimed job's `fence`, which every later write of the claimant for it carries (job_scripts.FENCE)."""

    outcome: ClaimOutcome
    attempts: int = 0
    fence: int = 0


@dataclass(frozen=True)
class Progress:
    """A claimed job's progress: its sentences done (`cached_sentences` of them from the cache), its new
    translations by sentence index with the scores of those that have one (kept until it is final, so that a
    parked or redelivered job resumes where it was, whatever the sentence cache holds), and all its warnings
    when some are new (None: unchanged)."""

    sentences_done: int
    cached_sentences: int = 0
    translations: dict[int, str] = field(default_factory=dict)
    scores: dict[int, float] | None = None
    warnings: list[dict[str, Any]] | None = None
    fidelity: dict[int, dict[str, Any]] | None = None  # the new translations' records (shared.text.fidelity)


class JobClaims:
    """The claims, leases and fences of the workers on the jobs they run."""

    def __init__(self, client: redis.Redis, keys: Keys, job_ttl: int, result_ttl: int):
        self.client = client
        self.keys = keys
        self.job_ttl = job_ttl
        self.result_ttl = result_ttl
        self._claim = client.register_script(CLAIM)
        self._renew = client.register_script(RENEW)
        self._park = client.register_script(PARK)
        self._progress = client.register_script(PROGRESS)
        self._release = client.register_script(RELEASE)
        self._lapsed = client.register_script(LAPSED)

    def claim(self, job_id: str, claimant: Claimant, fresh_only: bool = False) -> Claim:
        """Take a job for `claimant` (see claim_scripts.CLAIM), only one nobody took yet when `fresh_only`:
        one whose workers died `max_deliveries` times fails as lost."""
        route, worker, max_deliveries = claimant.route, claimant.worker, claimant.max_deliveries
        lost = f"the worker died {max_deliveries} times while running this job"
        error = JOB_HASH.encode_values(error={"code": ErrorCode.WORKER_LOST.value, "message": lost})["error"]
        outcome, attempts, *fence = self._claim(
            keys=[
                self.keys.job(job_id),
                self.keys.pending(route),
                self.keys.lease(job_id),
                self.keys.running(route),
                self.keys.callbacks_due,
                self.keys.stats,
                self.keys.events(job_id),
            ],
            args=[
                job_id,
                worker,
                int(claimant.lease_seconds * 1000),
                utc_now(),
                max_deliveries,
                int(fresh_only),
                self.result_ttl,
                error,
                int(claimant.lapse_is_loss),
            ],
        )
        return Claim(ClaimOutcome(outcome), int(attempts), int(fence[0]) if fence else 0)

    def oldest_pending(self, route: str, limit: int) -> list[str]:
        return list(self.client.zrange(self.keys.pending(route), 0, limit - 1))

    def waiting_since(self, route: str, before: float, limit: int) -> list[str]:
        """A route's queued jobs that have waited since before `before` (unix seconds), oldest first."""
        return list(self.client.zrangebyscore(self.keys.pending(route), "-inf", before, start=0, num=limit))

    def messages_waiting(self, route: str) -> int:
        """The Celery messages on a route's queue, not yet taken by any worker."""
        return int(self.client.llen(self.keys.queue(route)))

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
        """A route's running jobs whose lease lapsed and that nobody claimed since (see claim_scripts.LAPSED)."""
        return list(self._lapsed(keys=[self.keys.running(route)], args=[self.keys.job(""), self.keys.lease(""), limit]))

    def park(self, job_id: str, route: str, worker: str, fence: int) -> bool:
        """Give a job this worker runs back to its route's pending set (see claim_scripts.PARK); False if it
        was not ours."""
        keys = [self.keys.job(job_id), self.keys.pending(route), self.keys.lease(job_id)]
        return bool(self._park(keys=keys, args=[job_id, worker, fence]))

    def set_progress(self, job_id: str, fence: int, progress: Progress) -> Move:
        """Record a running job's progress. 'ok'; 'fenced' (claimed again since `fence`: nothing written);
        'stopped' (not running)."""
        record = JOB_HASH.encode_values(
            sentences_done=progress.sentences_done,
            cached_sentences=progress.cached_sentences,
            warnings=progress.warnings,
        )
        new = Sentences(progress.translations, progress.scores, progress.fidelity)
        events = new.events()
        args: list[Any] = [fence, self.job_ttl, len(record), len(events)]
        for pair in record.items():
            args.extend(pair)
        args += events + new.partial_fields()
        keys = [self.keys.job(job_id), self.keys.partial(job_id), self.keys.events(job_id)]
        return Move(self._progress(keys=keys, args=args))

    def partial_translations(self, job_ids: list[str]) -> list[dict[int, str]]:
        """The translations recorded so far of each job, by sentence index."""
        return [translations for translations, _ in self.partial_progress(job_ids)]

    def partial_fidelity(self, job_ids: list[str]) -> list[dict[int, dict[str, Any]]]:
        """The fidelity records kept so far with each job's progress, by sentence index."""
        pipe = self.client.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hgetall(self.keys.partial(job_id))
        return [
            {int(i[1:]): json.loads(v) for i, v in found.items() if i.startswith(FIDELITY_PREFIX)}
            for found in pipe.execute()
        ]

    def partial_progress(self, job_ids: list[str]) -> list[tuple[dict[int, str], dict[int, float]]]:
        """The translations recorded so far of each job, and the scores of those that have one, by sentence
        index."""
        pipe = self.client.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hgetall(self.keys.partial(job_id))
        return [
            (
                {int(i): t for i, t in found.items() if i.isdigit()},
                {int(i[1:]): float(v) for i, v in found.items() if i.startswith(SCORE_PREFIX)},
            )
            for found in pipe.execute()
        ]

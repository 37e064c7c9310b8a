"""The document stage's hold on the document jobs it parses and renders, in Redis: taking a job (a lease and a
fence), renewing and releasing the lease, finding lapsed ones and marking a job woken. Each change is one
atomic script (shared.store.stage_scripts). The translation workers' hold on the jobs they translate is
shared.store.job_claims.JobClaims'."""

from __future__ import annotations

from dataclasses import dataclass

import redis

from shared.store.keys import Keys
from shared.store.stage_scripts import LAPSED, RELEASE, RENEW, TAKE


@dataclass(frozen=True)
class Take:
    """What trying to take a job did: 'taken', 'leased' (a stage holds it), 'final' (not waiting for the
    stage) or 'lost' (its stages were lost too often: fail it with `fence`); the phase's takes so far, and the
    fence every later write of the taker for the job carries."""

    outcome: str
    attempts: int = 0
    fence: int = 0


class StageLeases:
    """The leases and fences of the document stage's processes on the jobs they parse and render."""

    def __init__(self, client: redis.Redis, keys: Keys):
        self.client = client
        self.keys = keys
        self._take = client.register_script(TAKE)
        self._renew = client.register_script(RENEW)
        self._release = client.register_script(RELEASE)
        self._lapsed = client.register_script(LAPSED)

    def take(self, job_id: str, holder: str, lease_seconds: float, max_deliveries: int) -> Take:
        """Take a `parsing` or `rendering` job for `holder` (see stage_scripts.TAKE)."""
        keys = [self.keys.job(job_id), self.keys.stage_lease(job_id), self.keys.staged, self.keys.wake(job_id)]
        outcome, attempts, fence = self._take(
            keys=keys, args=[job_id, holder, int(lease_seconds * 1000), max_deliveries]
        )
        return Take(outcome, int(attempts), int(fence))

    def renew(self, job_id: str, holder: str, fence: int, lease_seconds: float) -> bool:
        keys = [self.keys.stage_lease(job_id), self.keys.job(job_id)]
        return bool(self._renew(keys=keys, args=[holder, int(lease_seconds * 1000), fence]))

    def release(self, job_id: str, holder: str, fence: int, counted: bool = True) -> bool:
        """Let the holder's lease go once it is done with the job; `counted` False: the take does not count
        (the task is retried). False when another stage took the job since."""
        keys = [self.keys.stage_lease(job_id), self.keys.job(job_id), self.keys.staged]
        return bool(self._release(keys=keys, args=[fence, job_id, holder, "" if counted else "1"]))

    def lapsed(self, limit: int) -> list[str]:
        """Document jobs still parsing or rendering whose stage lease lapsed (see stage_scripts.LAPSED)."""
        return list(self._lapsed(keys=[self.keys.staged], args=[self.keys.job(""), self.keys.stage_lease(""), limit]))

    def mark_woken(self, job_id: str, ttl_seconds: int) -> bool:
        """True for the one caller that may send this job again now (none sent it within `ttl_seconds` and no
        stage has taken it since)."""
        return bool(self.client.set(self.keys.wake(job_id), "1", nx=True, ex=ttl_seconds))

    def holder(self, job_id: str) -> tuple[str, int, str]:
        """The stage process that took the job last ('' when none), the job's fence and its status."""
        stage, fence, status = self.client.hmget(self.keys.job(job_id), ["stage", "fence", "status"])
        return stage or "", int(fence or 0), status or ""

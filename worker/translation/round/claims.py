"""Which jobs this worker holds: its own job's claim and the waiting jobs a round takes in with it, the fence
of each job it holds (its writes for the job carry it: see shared.store.job_scripts.FENCE), and their leases,
kept while a round runs so that no other worker takes them as lost."""

from __future__ import annotations

import logging
import threading

import redis

from shared.store.job_claims import Claim, Claimant
from shared.store.job_status import ClaimOutcome
from worker.translation.liveness.activity import Activity
from worker.translation.liveness.broker_health import BrokerHealth, RetryingClaims, RetryingStore

log = logging.getLogger(__name__)

# How many of the oldest waiting jobs a round looks at when it takes in others.
CLAIM_WINDOW = 64


class Claims:
    """This worker's (`worker_id`'s) claims of its route's jobs, made once per process."""

    def __init__(
        self,
        store: RetryingClaims,
        jobs: RetryingStore,
        broker: BrokerHealth,
        route_key: str,
        worker_id: str,
        lease_seconds: float,
        max_deliveries: int,
    ):
        self.store, self.jobs, self.broker = store, jobs, broker  # the claims store; the job store
        self.route_key, self.worker_id = route_key, worker_id
        self.lease_seconds, self.max_deliveries = lease_seconds, max_deliveries
        self.fences: dict[str, int] = {}  # each job this process claimed in its current round

    def new_round(self) -> None:
        """The last round's claims are over (rounds run one at a time)."""
        self.fences = {}

    def fence(self, job_id: str) -> int:
        """The fence of this process's claim of the job (0: none)."""
        return self.fences.get(job_id, 0)

    def claim(self, job_id: str, fresh_only: bool = False) -> Claim:
        """Try to take a job of this worker's route (see JobClaims.claim); a claimed job's fence is kept."""
        claimant = Claimant(
            self.route_key,
            self.worker_id,
            self.lease_seconds,
            self.max_deliveries,
            lapse_is_loss=self.broker.lapse_is_loss(self.lease_seconds),
        )
        claim = self.store.claim(job_id, claimant, fresh_only=fresh_only)
        if claim.outcome == ClaimOutcome.CLAIMED:
            self.fences[job_id] = claim.fence
        return claim

    def claim_waiting(self, budget: int, taken: list[str], used: int | None = None) -> list[str]:
        """Claim waiting jobs whose sentences fit in what is left of the budget (`used` sentences, by default
        those of the first of `taken`): of the CLAIM_WINDOW oldest, the smallest first (oldest first among
        equals), so a round that starts with no job of its own (its job was batched with others earlier) takes
        the small jobs waiting rather than a parked big one, whose own wake-up brings it back."""
        candidates = [j for j in self.store.oldest_pending(self.route_key, CLAIM_WINDOW) if j not in taken]
        if not candidates:
            return []
        own = taken[:1] if used is None else []
        sizes = self.jobs.sizes(own + candidates)
        if used is None:
            used = sizes.pop(0) if own else 0
        claimed: list[str] = []
        for candidate, size in sorted(zip(candidates, sizes), key=lambda pair: pair[1]):
            if used and used + size > budget:
                continue
            if self.claim(candidate, fresh_only=True).outcome == ClaimOutcome.CLAIMED:
                claimed.append(candidate)
                used += size
        return claimed

    def waiting(self) -> int:
        """Jobs waiting in this worker's route, asked once (a failure is the caller's to answer)."""
        return self.jobs.once.pending_count(self.route_key)

    def renew_leases(self, fences: dict[str, int]) -> None:
        """Renew the leases of these claimed jobs, asked once (a failure is the caller's to answer)."""
        self.store.once.renew_leases(fences, self.worker_id, self.lease_seconds)


class LeaseKeeper:
    """Renews the leases of the jobs in a round from a background thread (their count is the round's
    `activity`, which the heartbeat reports)."""

    def __init__(self, claims: Claims, broker: BrokerHealth, activity: Activity, job_ids: list[str]):
        self.claims, self.broker, self.activity = claims, broker, activity
        self.fences = {job_id: claims.fence(job_id) for job_id in job_ids}  # see Claims.claim
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self.activity.running_jobs = len(self.job_ids)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.activity.running_jobs = 0

    @property
    def job_ids(self) -> list[str]:
        return list(self.fences)

    def add(self, job_ids: list[str]) -> None:
        # One assignment: the renewing thread sees the old or the new dict.
        self.fences = {**self.fences, **{job_id: self.claims.fence(job_id) for job_id in job_ids}}
        self.activity.running_jobs = len(self.fences)

    def _run(self) -> None:
        interval = max(0.2, self.claims.lease_seconds / 3)
        while not self._stop.wait(interval):
            try:
                self.claims.renew_leases(self.fences)
            except redis.RedisError as exc:
                self.broker.saw_trouble()
                log.warning("could not renew leases: %s", exc)

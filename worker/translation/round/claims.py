"""Which jobs this worker takes: its own job's claim and the waiting jobs a round takes in with it, and the
fence of each job it holds (its writes for the job carry it: see shared.store.job_scripts.FENCE)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.store.job_claims import Claim
from shared.store.job_status import ClaimOutcome

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext

# How many of the oldest waiting jobs a round looks at when it takes in others.
CLAIM_WINDOW = 64


class Claims:
    def __init__(self, ctx: WorkerContext):
        self.ctx = ctx
        self.fences: dict[str, int] = {}  # each job this process claimed in its current round

    def new_round(self) -> None:
        """The last round's claims are over (rounds run one at a time)."""
        self.fences = {}

    def fence(self, job_id: str) -> int:
        """The fence of this process's claim of the job (0: none)."""
        return self.fences.get(job_id, 0)

    def claim(self, job_id: str, fresh_only: bool = False) -> Claim:
        """Try to take a job of this worker's route (see JobStore.claim); a claimed job's fence is kept."""
        ctx = self.ctx
        claim = ctx.store.claim(
            job_id,
            ctx.route.key,
            ctx.worker_id,
            ctx.settings.lease_seconds,
            ctx.settings.max_deliveries,
            fresh_only=fresh_only,
            lapse_is_loss=self.lapse_is_loss(),
        )
        if claim.outcome == ClaimOutcome.CLAIMED:
            self.fences[job_id] = claim.fence
        return claim

    def lapse_is_loss(self) -> bool:
        """Whether a running job whose lease lapsed counts as lost now: not within two leases of a broker
        outage this process saw (its holder may be alive, its lease expired during the outage)."""
        return self.ctx.broker.lapse_is_loss(self.ctx.settings.lease_seconds)

    def claim_waiting(self, budget: int, taken: list[str], used: int | None = None) -> list[str]:
        """Claim waiting jobs whose sentences fit in what is left of the budget (`used` sentences, by default
        those of the first of `taken`): of the CLAIM_WINDOW oldest, the smallest first (oldest first among
        equals), so a round that starts with no job of its own (its job was batched with others earlier) takes
        the small jobs waiting rather than a parked big one, whose own wake-up brings it back."""
        store = self.ctx.store
        candidates = [j for j in store.oldest_pending(self.ctx.route.key, CLAIM_WINDOW) if j not in taken]
        if not candidates:
            return []
        own = taken[:1] if used is None else []
        sizes = store.sizes(own + candidates)
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
        return self.ctx.store.once.pending_count(self.ctx.route.key)

"""One translation round: the task's own job plus other waiting jobs, translated in shared batches.

Every Celery message is a wake-up: the task claims its own job (if it still needs
work) and, unless that job already lost a delivery, the oldest waiting jobs up
to a sentence budget. A co-batched job's own message is still on the queue; when
it arrives the job is final (nothing to do) or its worker died (its lease has
expired, so it is claimed again). A job is never acknowledged before its result
is stored, because its message stays unacknowledged or queued until then.

A round's last batch, when it is small, asks during its first steps whether enough
jobs have arrived to at least double it; if so it stops and the round takes them
in, so that a burst whose first job found an empty queue runs in full batches
rather than behind that one job's lone batch. The batches holding the stopped
batch's sentences run first, so its jobs wait for one batch, not for the arrivals';
a lone job under no load only pays a few queue-length reads.

Fairness: a round that has run TRANSQ_FAIR_SLICE_BATCHES batches while other jobs
wait parks its unfinished jobs (back in the pending set under their submission
time, their translations so far kept with their progress) and sends each a new
wake-up, which queues behind the waiting jobs' messages. So one huge job cannot
hold a worker while small jobs wait: they run after at most that many batches.
A round also parks its jobs after half the task's soft time limit, so a job of any size
finishes over several rounds instead of failing with `timeout`, and when its worker shuts down
(SIGTERM: worker.translation.drain), so a scale-in or a deploy costs one batch, not a lost delivery.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from celery.exceptions import SoftTimeLimitExceeded

from shared.errors import ErrorCode
from shared.settings import Settings
from shared.store.job_status import ClaimOutcome
from worker.translation.liveness.activity import Activity
from worker.translation.liveness.broker_health import BrokerHealth
from worker.translation.round.batch_runner import PassRunner
from worker.translation.round.claims import Claims, LeaseKeeper
from worker.translation.round.job_outcomes import Outcomes, fail, finish, park
from worker.translation.round.job_work import JobWork, WorkLoader
from worker.translation.round.pass_ends import PassEnd

log = logging.getLogger(__name__)

# A round takes in arrivals this many times at most (each at least doubles the batch, so few are needed).
MAX_REGROUPS = 4


@dataclass
class RoundResult:
    retry_after: float | None = None
    jobs: list[str] = field(default_factory=list)


class Rounds:
    """This process's rounds (one at a time), made once per process once its model is loaded: jobs are
    claimed through `claims` and kept leased (their count is the round's `activity`), loaded by `loader`,
    translated by `passes`, and their outcomes go to `outcomes`."""

    def __init__(
        self,
        settings: Settings,
        claims: Claims,
        loader: WorkLoader,
        passes: PassRunner,
        outcomes: Outcomes,
        broker: BrokerHealth,
        activity: Activity,
    ):
        self.settings, self.claims, self.loader = settings, claims, loader
        self.passes, self.outcomes, self.broker, self.activity = passes, outcomes, broker, activity

    def run(self, job_id: str) -> RoundResult:
        """Claim the job (and waiting ones), translate, store results."""
        settings = self.settings
        self.claims.new_round()
        self.claims.store.woken(job_id)
        claim = self.claims.claim(job_id)
        claimed: list[str] = []
        solo = False
        if claim.outcome == ClaimOutcome.LEASED:
            return RoundResult(retry_after=settings.lease_seconds)
        if claim.outcome == ClaimOutcome.LOST:  # failed by the claim (and counted there)
            log.error("job %s failed: worker lost %d times", job_id, claim.attempts - 1, extra={"job_id": job_id})
        if claim.outcome == ClaimOutcome.CLAIMED:
            claimed.append(job_id)
            solo = claim.attempts > 1  # it lost a delivery: keep possible poison away from others
            if solo:
                log.warning(
                    "job %s delivered again (attempt %d): running it alone",
                    job_id,
                    claim.attempts,
                    extra={"job_id": job_id},
                )
        if not solo:
            claimed += self.claims.claim_waiting(budget=settings.max_round_sentences, taken=claimed)
        if not claimed:
            return RoundResult()
        with LeaseKeeper(self.claims, self.broker, self.activity, claimed) as keeper:
            own = job_id if job_id in claimed else None
            self.translate_jobs(claimed, own_job_id=own, keeper=None if solo else keeper)
        return RoundResult(jobs=keeper.job_ids)

    def translate_jobs(self, job_ids: list[str], own_job_id: str | None, keeper: LeaseKeeper | None = None) -> None:
        """Translate the claimed jobs; with a lease keeper, also take in jobs that arrive while a small
        batch starts (their leases join the keeper's)."""
        settings, out = self.settings, self.outcomes
        works = self.loader.load(job_ids)
        active = {w.job.id: w for w in works}
        deadline = time.monotonic() + settings.task_soft_time_limit / 2
        try:
            _finish_complete(out, works, active)
            regroups = MAX_REGROUPS if keeper is not None else 0
            first: frozenset[str] = frozenset()
            while active:
                end = self.passes.run(
                    active,
                    regroup=regroups > 0,
                    first=first,
                    fair_slice=settings.fair_slice_batches,
                    deadline=deadline,
                )
                if end is PassEnd.DONE:
                    break
                if end.parks:
                    park(out, active)
                    break
                regroups -= 1
                first = frozenset(active)  # the stopped batch's jobs go first in the round's new plan
                used = sum(len(w.sentences) for w in active.values())
                arrivals = self.claims.claim_waiting(settings.max_round_sentences, taken=list(active), used=used)
                if not arrivals or keeper is None:
                    regroups = 0  # others took them: finish what this round has
                    continue
                keeper.add(arrivals)
                new = self.loader.load(arrivals)
                works += new
                active.update((w.job.id, w) for w in new)
                _finish_complete(out, new, active)
                log.info("took %d arriving job(s) into the round", len(new))
        except SoftTimeLimitExceeded:
            if own_job_id in active:
                fail(out, own_job_id, ErrorCode.TIMEOUT, f"the job ran longer than {settings.task_soft_time_limit}s")
                active.pop(own_job_id)
            park(out, active)
        except Exception:
            log.exception("translation round of %d job(s) failed", len(active))
            for work in active.values():
                if work.job.id == own_job_id and len(works) == 1:
                    fail(out, work.job.id, ErrorCode.INTERNAL_ERROR, "the worker could not translate this job")
                else:
                    # Counted as an attempt, so it runs alone next time and cannot sink others again.
                    self.claims.store.drop_lease(work.job.id, work.fence)
            if own_job_id in active and len(works) > 1:
                if self.claims.claim(own_job_id).outcome == ClaimOutcome.CLAIMED:
                    self.translate_jobs([own_job_id], own_job_id)


def _finish_complete(out: Outcomes, works: list[JobWork], active: dict[str, JobWork]) -> None:
    """Finish the jobs that need no model (all their sentences were cached or translated before)."""
    for work in works:
        if work.complete:
            finish(out, work)
            active.pop(work.job.id)

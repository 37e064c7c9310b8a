"""Why a pass stops before its plan is done, leaving what it did not run untranslated:

- `drain`: the worker is shutting down (worker.translation.drain): the task ends;
- `fair_slice`: it has run TRANSQ_FAIR_SLICE_BATCHES batches while other jobs wait in the queue, so the
  waiting ones go next;
- `time_slice`: the round has run half its task's soft time limit; their own wake-ups bring the jobs back, so
  a document of any size finishes, in as many rounds as it needs;

(for these three the round parks its unfinished jobs with their translations so far, see
worker.translation.round.job_outcomes.park)

- `regroup`: regrouping. A round's small last batch asks, during its first decoding steps, whether enough jobs
  have arrived to at least double it (ArrivalWatch); if so it stops (worker.translation.model.batching.
  BatchInterrupted) and the round takes them in and plans again.
"""

from __future__ import annotations

import enum
import logging
import time

import redis

from worker.translation.drain import draining
from worker.translation.round.claims import Claims

log = logging.getLogger(__name__)

# A small batch is asked to stop for arrivals during this many of its first decoding steps.
REGROUP_STEPS = 8


class PassEnd(enum.Enum):
    DONE = "done"  # every sentence of the active jobs is translated (or its job failed or was cancelled)
    REGROUP = "regroup"  # a small last batch stopped for arriving jobs
    FAIR_SLICE = "fair slice"  # the pass ran its share of batches while others wait
    TIME_SLICE = "time slice"  # the round ran half of its task's time limit
    DRAIN = "drain"  # the worker is shutting down (SIGTERM): give the jobs back now

    @property
    def parks(self) -> bool:
        """Whether the round gives its unfinished jobs back."""
        return self in (PassEnd.FAIR_SLICE, PassEnd.TIME_SLICE, PassEnd.DRAIN)


def slice_end(claims: Claims, run: int, fair_slice: int, deadline: float | None) -> PassEnd | None:
    """Why the pass stops before its next batch, having run `run` batches; None: it goes on."""
    if draining.is_set():
        log.info("the worker is shutting down after %d batches: giving the round's jobs back", run)
        return PassEnd.DRAIN
    if fair_slice and run >= fair_slice and _others_wait(claims):
        log.info("ran %d batches while other jobs wait: giving the rest of the round back", run)
        return PassEnd.FAIR_SLICE
    if deadline is not None and run and time.monotonic() > deadline:
        log.info("the round ran %d batches and half its time limit: giving its jobs back", run)
        return PassEnd.TIME_SLICE
    return None


def _others_wait(claims: Claims) -> bool:
    try:
        return claims.waiting() > 0
    except redis.RedisError:
        return False


def is_small(batch_size: int, rows: int) -> bool:
    """Whether a batch is small enough to stop for arrivals: at most half the most a batch may hold."""
    return 2 * batch_size <= rows


class ArrivalWatch:
    """Answers, during a batch's first REGROUP_STEPS steps, whether enough jobs are waiting to at least double
    the batch (a broker that does not answer at once is a no: the batch runs on)."""

    def __init__(self, claims: Claims, batch_size: int):
        self.claims = claims
        self.batch_size = batch_size
        self.steps_left = REGROUP_STEPS

    def __call__(self) -> bool:
        if self.steps_left <= 0:
            return False
        self.steps_left -= 1
        try:
            return self.claims.waiting() >= self.batch_size
        except redis.RedisError:
            return False

"""When a pass stops before its plan is done, leaving what it did not run untranslated (the round parks its
unfinished jobs with their translations so far, see worker.translation.round.job_outcomes.park):

- `drain`: the worker is shutting down (worker.translation.drain): the task ends;
- `fair_slice`: it has run TRANSQ_FAIR_SLICE_BATCHES batches while other jobs wait in the queue, so the
  waiting ones go next;
- `time_slice`: the round has run half its task's soft time limit; their own wake-ups bring the jobs back, so
  a document of any size finishes, in as many rounds as it needs.

(A pass also ends in `regroup`, when its small last batch stops for arriving jobs: worker.translation.round.arrival_watch.)
"""

from __future__ import annotations

import enum
import logging
import time
from typing import TYPE_CHECKING

import redis

from worker.translation.drain import draining

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext

log = logging.getLogger(__name__)


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


def slice_end(ctx: WorkerContext, run: int, fair_slice: int, deadline: float | None) -> PassEnd | None:
    """Why the pass stops before its next batch, having run `run` batches; None: it goes on."""
    if draining.is_set():
        log.info("the worker is shutting down after %d batches: giving the round's jobs back", run)
        return PassEnd.DRAIN
    if fair_slice and run >= fair_slice and _others_wait(ctx):
        log.info("ran %d batches while other jobs wait: giving the rest of the round back", run)
        return PassEnd.FAIR_SLICE
    if deadline is not None and run and time.monotonic() > deadline:
        log.info("the round ran %d batches and half its time limit: giving its jobs back", run)
        return PassEnd.TIME_SLICE
    return None


def _others_wait(ctx: WorkerContext) -> bool:
    try:
        return ctx.claims.waiting() > 0
    except redis.RedisError:
        return False

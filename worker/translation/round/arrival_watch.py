"""Regrouping: a round's small last batch asks, during its first decoding steps, whether enough jobs have
arrived to at least double it; if so it stops (worker.translation.model.batching.BatchInterrupted) and the round takes
them in and plans again."""

from __future__ import annotations

from typing import TYPE_CHECKING

import redis

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext

# A small batch is asked to stop for arrivals during this many of its first decoding steps.
REGROUP_STEPS = 8


def is_small(batch_size: int, rows: int) -> bool:
    """Whether a batch is small enough to stop for arrivals: at most half the most a batch may hold."""
    return 2 * batch_size <= rows


class ArrivalWatch:
    """Answers, during a batch's first REGROUP_STEPS steps, whether enough jobs are waiting to at least double
    the batch (a broker that does not answer at once is a no: the batch runs on)."""

    def __init__(self, ctx: WorkerContext, batch_size: int):
        self.ctx = ctx
        self.batch_size = batch_size
        self.steps_left = REGROUP_STEPS

    def __call__(self) -> bool:
        if self.steps_left <= 0:
            return False
        self.steps_left -= 1
        try:
            return self.ctx.claims.waiting() >= self.batch_size
        except redis.RedisError:
            return False

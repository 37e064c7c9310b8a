"""Fitting a batch to the memory free now (cgroup or host, less TRANSQ_MEMORY_HEADROOM_MB): it runs in parts
that fit; a piece that fits in no part fails its jobs with `resource_exhausted`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.errors import ErrorCode
from shared.memory import probe_memory
from worker.translation.model.batching import fit_to_memory
from worker.translation.round.batch_plan import BatchPlan
from worker.translation.round.job_outcomes import fail
from worker.translation.round.job_work import JobWork

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext

TOO_BIG = "a sentence of this job needs more memory than the worker has free"


def fit_batch(ctx: WorkerContext, plan: BatchPlan, batch: list[int], active: dict[str, JobWork]) -> list[list[int]]:
    """The batch in parts that fit in free memory; the jobs of a piece too big for any leave `active`, failed."""
    memory = probe_memory(ctx.settings.cgroup_root)
    available = memory.available_bytes - ctx.settings.memory_headroom_mb * 2**20
    parts, too_big = fit_to_memory(batch, plan.lengths, available, ctx.engine.estimate_batch_bytes)
    for job_id in plan.jobs_of(too_big) & active.keys():
        fail(ctx, job_id, ErrorCode.RESOURCE_EXHAUSTED, TOO_BIG)
        active.pop(job_id)
    return parts

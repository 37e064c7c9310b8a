"""Running a round's model batches (a pass): plan them (worker.translation.round.batch_plan), stop between them when
the round's slice is over (worker.translation.round.pass_slicing), fit each to free memory
(worker.translation.round.memory_fit), decode it, and record what it finished (worker.translation.round.recording)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from worker.translation.fault_hooks import run_fault_hooks
from worker.translation.model.batching import BatchInterrupted
from worker.translation.round.arrival_watch import ArrivalWatch, is_small
from worker.translation.round.batch_plan import BatchPlan
from worker.translation.round.glossary_pass import translate_glossary_sentences
from worker.translation.round.job_work import JobWork
from worker.translation.round.memory_fit import fit_batch
from worker.translation.round.pass_slicing import PassEnd, slice_end
from worker.translation.round.recording import drop_stopped, record

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext

log = logging.getLogger(__name__)


def translate_pass(
    ctx: WorkerContext,
    active: dict[str, JobWork],
    regroup: bool = False,
    first: frozenset[str] = frozenset(),
    fair_slice: int = 0,
    deadline: float | None = None,
) -> PassEnd:
    """Translate the active jobs' untranslated sentences in batches, those holding sentences of the jobs in
    `first` first, then shortest job first; with `regroup`, a small last batch stops for arriving jobs.
    Finished jobs leave `active`."""
    translate_glossary_sentences(ctx, active)
    plan = BatchPlan.make(ctx.engine, active, first)
    run = 0
    for number, batch in enumerate(plan.batches):
        end = slice_end(ctx, run, fair_slice, deadline)
        if end is not None:
            return end
        drop_stopped(ctx, active)
        batch = plan.still_needed(batch, active)
        if not batch:
            continue
        parts = fit_batch(ctx, plan, batch, active)
        last = number == len(plan.batches) - 1
        watch_arrivals = regroup and last and len(parts) == 1 and is_small(len(parts[0]), plan.rows)
        scores = any(work.job.want_scores for work in active.values())
        try:
            for part in parts:
                decode(ctx, plan, part, ArrivalWatch(ctx, len(part)) if watch_arrivals else None, scores)
        except BatchInterrupted:
            return PassEnd.REGROUP
        run += 1
        record(ctx, plan, active, plan.finished(batch), plan.finished_scores(batch))
    return PassEnd.DONE


def decode(
    ctx: WorkerContext, plan: BatchPlan, part: list[int], watch: ArrivalWatch | None = None, scores: bool = False
) -> None:
    """Translate one part of a batch and keep its output in the plan, with each piece's confidence when a job
    of the pass asked for scores (BatchInterrupted: the watch stopped it)."""
    if ctx.settings.test_hooks:
        run_fault_hooks(plan.texts(part))
    started = time.perf_counter()
    # Asked for only when wanted: greedy decoding pays a log-sum-exp over the vocabulary a step for them
    # (bench/confidence.py: +5 to +14 % at beam 1, +2 to +13 % at beam 4).
    confidences: list[float] | None = [] if scores else None
    try:
        texts = ctx.engine.translate_ids(plan.ids(part), interrupt=watch, scores=confidences)
    except BatchInterrupted:
        log.info("batch of %d stopped after %.3fs: jobs arrived", len(part), time.perf_counter() - started)
        raise
    ctx.stats.observe_batch(len(part), time.perf_counter() - started)
    plan.keep(part, texts, confidences)

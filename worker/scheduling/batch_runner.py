"""Running a round's model batches: plan them, order them, fit them to memory, translate, record.

Batches are planned over every untranslated sentence of the round's jobs (length-sorted, under the
batch budget) and run shortest job first: a batch that completes a job with few sentences left runs
before one that only advances a big job, so a one-sentence job sharing a round with a big one is not
last. The pass stops early in these cases, leaving what it did not run untranslated:

- `regroup`: its last batch is small and enough jobs arrive during its first steps to at least double
  it (the round takes them in and plans again);
- `fair_slice`: it has run that many batches while other jobs wait in the queue (the round parks its
  unfinished jobs, so the waiting ones go next);
- `time_slice`: the round has run half its task's soft time limit (the round parks its jobs and their
  own wake-ups bring them back, so a document of any size finishes, in as many rounds as it needs);
- `drain`: the worker is shutting down (worker.scheduling.drain): the round parks its jobs and the task ends.
"""

from __future__ import annotations

import enum
import logging
import time
from typing import TYPE_CHECKING

import redis

from shared.error_codes import ErrorCode
from shared.job_status import JobStatus, Move
from shared.memory import probe_memory
from worker.model.batching import BatchInterrupted, fit_to_memory, plan_batches
from worker.model.output_guard import guard
from worker.scheduling.drain import draining
from worker.scheduling.fault_hooks import run_fault_hooks
from worker.scheduling.job_work import JobWork, fail, finish, taken_over

if TYPE_CHECKING:
    from worker.scheduling.context import WorkerContext

log = logging.getLogger(__name__)

# A small batch is asked to stop for arrivals during this many of its first decoding steps.
REGROUP_STEPS = 8


class PassEnd(enum.Enum):
    DONE = "done"  # every sentence of the active jobs is translated (or its job failed or was cancelled)
    REGROUP = "regroup"  # a small last batch stopped for arriving jobs
    FAIR_SLICE = "fair slice"  # the pass ran its share of batches while others wait
    TIME_SLICE = "time slice"  # the round ran half of its task's time limit
    DRAIN = "drain"  # the worker is shutting down (SIGTERM): give the jobs back now


class ArrivalWatch:
    """Answers, during a batch's first REGROUP_STEPS steps, whether enough jobs are waiting to at
    least double the batch."""

    def __init__(self, ctx: WorkerContext, batch_size: int):
        self.ctx = ctx
        self.batch_size = batch_size
        self.steps_left = REGROUP_STEPS

    def __call__(self) -> bool:
        if self.steps_left <= 0:
            return False
        self.steps_left -= 1
        try:
            return self.ctx.waiting() >= self.batch_size
        except redis.RedisError:
            return False


def translate_pass(
    ctx: WorkerContext,
    active: dict[str, JobWork],
    regroup: bool = False,
    first: frozenset[str] = frozenset(),
    fair_slice: int = 0,
    deadline: float | None = None,
) -> PassEnd:
    """Translate the active jobs' untranslated sentences in batches, those holding sentences of the jobs
    in `first` first, then shortest job first. Finished jobs leave `active`."""
    engine, settings = ctx.engine, ctx.settings
    needed: dict[str, list[tuple[str, int]]] = {}
    for work in active.values():
        for i, (sentence, translation) in enumerate(zip(work.sentences, work.translations)):
            if translation is None:
                needed.setdefault(sentence, []).append((work.job.id, i))
    misses = list(needed)
    # Each unit is one piece of one sentence; long sentences have several pieces.
    units: list[tuple[int, int, list[int]]] = []
    pieces_per_sentence: list[int] = []
    for s_index, ids in enumerate(engine.token_ids(misses)):
        chunks = engine.chunks(ids)
        pieces_per_sentence.append(len(chunks))
        units += [(s_index, c_index, chunk) for c_index, chunk in enumerate(chunks)]
    lengths = [len(u[2]) for u in units]
    outputs: dict[int, list[str | None]] = {i: [None] * n for i, n in enumerate(pieces_per_sentence)}
    rows, tokens = engine.batch_budget()

    def jobs_of(unit: int) -> list[str]:
        return [job_id for job_id, _ in needed[misses[units[unit][0]]]]

    def order(batch: list[int]) -> tuple[bool, int]:
        jobs = {job_id for unit in batch for job_id in jobs_of(unit)}
        return (not jobs & first, min(active[j].remaining for j in jobs))

    batches = sorted(plan_batches(lengths, tokens, rows), key=order)
    run = 0
    for number, batch in enumerate(batches):
        if draining.is_set():
            log.info("the worker is shutting down after %d batches: giving the round's jobs back", run)
            return PassEnd.DRAIN
        if fair_slice and run >= fair_slice and _others_wait(ctx):
            log.info("ran %d batches while other jobs wait: giving the rest of the round back", run)
            return PassEnd.FAIR_SLICE
        if deadline is not None and run and time.monotonic() > deadline:
            log.info("the round ran %d batches and half its time limit: giving its jobs back", run)
            return PassEnd.TIME_SLICE
        _drop_cancelled(ctx, active)
        batch = [u for u in batch if any(j in active for j in jobs_of(u))]
        if not batch:
            continue
        memory = probe_memory(settings.cgroup_root)
        available = memory.available_bytes - settings.memory_headroom_mb * 2**20
        parts, too_big = fit_to_memory(batch, lengths, available, engine.estimate_batch_bytes)
        for unit in too_big:
            for job_id in jobs_of(unit):
                if job_id in active:
                    fail(
                        ctx,
                        job_id,
                        ErrorCode.RESOURCE_EXHAUSTED,
                        "a sentence of this job needs more memory than the worker has free",
                    )
                    active.pop(job_id)
        small_last = regroup and number == len(batches) - 1 and len(parts) == 1 and 2 * len(parts[0]) <= rows
        for part in parts:
            if settings.test_hooks:
                run_fault_hooks([misses[units[u][0]] for u in part])
            started = time.perf_counter()
            watch = ArrivalWatch(ctx, len(part)) if small_last else None
            try:
                texts = engine.translate_ids([units[u][2] for u in part], interrupt=watch)
            except BatchInterrupted:
                log.info("batch of %d stopped after %.3fs: jobs arrived", len(part), time.perf_counter() - started)
                return PassEnd.REGROUP
            ctx.stats.observe_batch(len(part), time.perf_counter() - started)
            for unit, text in zip(part, texts):
                outputs[units[unit][0]][units[unit][1]] = text
        run += 1
        finished = {}
        for unit in batch:
            s_index = units[unit][0]
            pieces = outputs[s_index]
            if all(p is not None for p in pieces) and misses[s_index] not in finished:
                finished[misses[s_index]] = " ".join(p for p in pieces if p)
        _record(ctx, active, needed, finished)
    return PassEnd.DONE


def _others_wait(ctx: WorkerContext) -> bool:
    try:
        return ctx.waiting() > 0
    except redis.RedisError:
        return False


def _record(
    ctx: WorkerContext, active: dict[str, JobWork], needed: dict[str, list[tuple[str, int]]], finished: dict[str, str]
) -> None:
    """Cache new translations, record progress (with the translations, see JobStore.set_progress),
    finish complete jobs."""
    if not finished:
        return
    warnings, still_bad = guard(ctx.engine, finished) if ctx.settings.output_guard else ({}, set())
    ctx.cache.put_many(ctx.namespace, {s: t for s, t in finished.items() if s not in still_bad})
    ctx.stats.incr("sentences_translated", len(finished))
    if warnings:
        ctx.stats.incr("degenerate_translations", len(warnings))
    touched = set()
    for sentence, translation in finished.items():
        for job_id, index in needed[sentence]:
            if job_id in active:
                active[job_id].translations[index] = translation
                if sentence in warnings:
                    active[job_id].warn(index, warnings[sentence])
                touched.add(job_id)
    for job_id in touched:
        work = active[job_id]
        if work.complete:
            finish(ctx, work)
            active.pop(job_id)
        elif not save_progress(ctx, work):
            active.pop(job_id)


def save_progress(ctx: WorkerContext, work: JobWork) -> bool:
    """Record the job's progress; False when it was refused (the job was taken over: drop it)."""
    new = work.unsaved()
    warnings = work.unsaved_warnings()
    outcome = ctx.broker.retry(
        lambda: ctx.store.set_progress(work.job.id, work.fence, work.done, work.cached, new, warnings)
    )
    if outcome == Move.FENCED:
        taken_over(ctx, work.job.id, "progress")
        return False
    return True


def _drop_cancelled(ctx: WorkerContext, active: dict[str, JobWork]) -> None:
    if not active:
        return
    ids = list(active)
    for job_id, status in zip(ids, ctx.broker.retry(lambda: ctx.store.statuses(ids))):
        if status != JobStatus.RUNNING:
            log.info(
                "job %s is %s: its remaining sentences are dropped", job_id, status or "gone", extra={"job_id": job_id}
            )
            active.pop(job_id)

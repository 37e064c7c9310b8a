"""After each batch: the finished sentences go to the sentence cache and to every active job that needs them
(with the output guard's warnings), complete jobs are finished and the others' progress saved; and, before
each batch, jobs no longer running (cancelled, failed by another path) leave the pass."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from shared.store.job_status import JobStatus
from shared.store.sentence_cache import SentenceCache
from worker.translation.liveness.broker_health import RetryingStore
from worker.translation.model.output_guard import guard
from worker.translation.round.batch_plan import BatchPlan
from worker.translation.round.job_outcomes import Outcomes, finish, save_progress
from worker.translation.round.job_work import JobWork

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine

log = logging.getLogger(__name__)


def record(
    engine: TranslationEngine,
    output_guard: bool,
    cache: SentenceCache,
    namespace: str,
    out: Outcomes,
    plan: BatchPlan,
    active: dict[str, JobWork],
    finished: dict[str, str],
    scores: dict[str, float],
) -> None:
    """Cache new translations with their scores (under the model's `namespace`), record progress (with the
    translations and scores, see JobStore.set_progress), finish complete jobs; with `output_guard`, degenerate
    translations are made again first (worker.translation.model.output_guard)."""
    if not finished:
        return
    warnings, still_bad = guard(engine, finished) if output_guard else ({}, set())
    kept = {s: t for s, t in finished.items() if s not in still_bad}
    cache.put_many(namespace, kept, {s: scores[s] for s in kept if s in scores and s not in warnings})
    out.stats.incr("sentences_translated", len(finished))
    out.stats.incr("degenerate_translations", len(warnings))
    touched = set()
    for sentence, translation in finished.items():
        for job_id, index in plan.places[sentence]:
            if job_id in active:
                active[job_id].translations[index] = translation
                active[job_id].scores[index] = None if sentence in warnings else scores.get(sentence)
                if sentence in warnings:
                    active[job_id].warn(index, warnings[sentence])
                touched.add(job_id)
    for job_id in touched:
        work = active[job_id]
        if work.complete:
            finish(out, work)
            active.pop(job_id)
        elif not save_progress(out, work):
            active.pop(job_id)


def drop_stopped(store: RetryingStore, active: dict[str, JobWork]) -> None:
    """Jobs no longer running (cancelled meanwhile) leave `active`: their remaining sentences are dropped."""
    if not active:
        return
    ids = list(active)
    for job_id, status in zip(ids, store.statuses(ids)):
        if status != JobStatus.RUNNING:
            log.info(
                "job %s is %s: its remaining sentences are dropped", job_id, status or "gone", extra={"job_id": job_id}
            )
            active.pop(job_id)

"""After each batch: the finished sentences go to the sentence cache (a glossary's under its own namespace) and
to every active job that needs them (with the output guard's warnings), complete jobs are finished and the
others' progress saved; and, before each batch, jobs no longer running (cancelled, failed by another path)
leave the pass."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from shared.store.job_status import JobStatus
from shared.store.sentence_cache import SentenceCache, glossary_namespace
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
    finished: dict[int, str],
    scores: dict[int, float],
) -> None:
    """Cache the plan's newly translated entries (`finished`, entry index -> translation) with their scores
    (under the model's `namespace`; a glossary's, under its own: shared.store.sentence_cache.glossary_namespace),
    record progress (with the translations and scores, see JobStore.set_progress), finish complete jobs; with
    `output_guard`, degenerate plain translations are made again first (worker.translation.model.output_guard)."""
    if not finished:
        return
    entries = plan.entries
    plain = {entries[e].sentence: t for e, t in finished.items() if not entries[e].glossary}
    warnings, still_bad = guard(engine, plain) if output_guard and plain else ({}, set())
    kept = {s: t for s, t in plain.items() if s not in still_bad}
    plain_scores = {entries[e].sentence: score for e, score in scores.items()}
    cache.put_many(namespace, kept, {s: plain_scores[s] for s in kept if s in plain_scores and s not in warnings})
    by_glossary: dict[str, dict[str, str]] = {}
    for e, translation in finished.items():
        if entries[e].glossary:
            by_glossary.setdefault(entries[e].glossary, {})[entries[e].sentence] = translation
    for digest, translations in by_glossary.items():
        cache.put_many(glossary_namespace(namespace, digest), translations)
    out.stats.add({"sentences_translated": len(finished), "degenerate_translations": len(warnings)})
    touched = set()
    for e, translation in finished.items():
        entry = entries[e]
        warning = None if entry.glossary else warnings.get(entry.sentence)
        translation = translation if entry.glossary else plain[entry.sentence]  # the guard's, made again
        for job_id, index in entry.places:
            if job_id in active:
                active[job_id].translations[index] = translation
                active[job_id].scores[index] = None if warning else scores.get(e)
                if warning:
                    active[job_id].warn(index, warning)
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

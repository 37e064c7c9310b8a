"""Running a round's model batches (a pass): plan them (worker.translation.round.batch_plan: a glossary's
sentences among them), stop between them when the round's slice is over (worker.translation.round.pass_ends;
not before a follow-up batch, which finishes the glossary sentences the batch before began), fit each to free
memory, decode it, and record what it finished (worker.translation.round.recording).

Fitting a batch to the memory free now (cgroup or host, less TRANSQ_MEMORY_HEADROOM_MB): it runs in parts that
fit; a piece that fits in no part fails its jobs with `resource_exhausted`."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from shared.errors import ErrorCode
from shared.memory import probe_memory
from shared.routing.routes import language_pair
from shared.settings import Settings
from shared.store.sentence_cache import SentenceCache
from shared.text.fidelity import untranslated_pattern
from worker.translation.fault_hooks import run_fault_hooks
from worker.translation.liveness.broker_health import RetryingStore
from worker.translation.model.batching import BatchInterrupted, fit_to_memory
from worker.translation.round.batch_plan import BatchPlan
from worker.translation.round.claims import Claims
from worker.translation.round.job_outcomes import Outcomes, fail
from worker.translation.round.job_work import JobWork
from worker.translation.round.pass_ends import ArrivalWatch, PassEnd, is_small, slice_end
from worker.translation.round.recording import drop_stopped, record

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine

log = logging.getLogger(__name__)

TOO_BIG = "a sentence of this job needs more memory than the worker has free"


class PassRunner:
    """Runs passes with the loaded model, made once per process: its translations are cached under its
    `namespace`, its jobs' outcomes go to `outcomes`; `store` tells which jobs are still running, `claims`
    whether others wait."""

    def __init__(
        self,
        settings: Settings,
        engine: TranslationEngine,
        cache: SentenceCache,
        namespace: str,
        store: RetryingStore,
        claims: Claims,
        outcomes: Outcomes,
    ):
        self.settings, self.engine, self.cache, self.namespace = settings, engine, cache, namespace
        self.store, self.claims, self.outcomes = store, claims, outcomes
        # the pair's source-script characters a translation must not keep (shared.text.fidelity)
        self.untranslated = untranslated_pattern(*language_pair(settings))

    def run(
        self,
        active: dict[str, JobWork],
        regroup: bool = False,
        first: frozenset[str] = frozenset(),
        fair_slice: int = 0,
        deadline: float | None = None,
    ) -> PassEnd:
        """Translate the active jobs' untranslated sentences in batches (a glossary's matched ones through term
        protection, in the same batches: worker.translation.round.batch_plan), those holding sentences of the jobs
        in `first` first, then shortest job first; with `regroup`, a small last batch stops for arriving jobs.
        Finished jobs leave `active`."""
        plan = BatchPlan.make(self.engine, active, first, spans=self.settings.protect_spans)
        self.record(plan, active, plan.ready, {})  # a glossary's sentences of terms only: no model needed
        run = 0
        while plan.batches:
            batch, follow_up = plan.next_batch()
            # A follow-up batch finishes sentences the last one began (a glossary's pieces between its terms): the
            # slice does not end before it, or that work would be lost; a shutdown does.
            end = slice_end(self.claims, run, 0 if follow_up else fair_slice, None if follow_up else deadline)
            if end is not None:
                return end
            drop_stopped(self.store, active)
            batch = plan.still_needed(batch, active)
            if not batch:
                continue
            parts = self.fit_to_memory(plan, batch, active)
            last = not plan.batches and not follow_up  # (a follow-up is not stopped for arrivals either)
            watch_arrivals = regroup and last and len(parts) == 1 and is_small(len(parts[0]), plan.rows)
            # (the quality gate judges scores: a gated job needs them as much as one that asked for them)
            scores = any(work.job.want_scores or work.min_confidence is not None for work in active.values())
            try:
                for part in parts:
                    self.decode(plan, part, ArrivalWatch(self.claims, len(part)) if watch_arrivals else None, scores)
            except BatchInterrupted:
                return PassEnd.REGROUP
            run += 1
            self.record(plan, active, *plan.finish(batch))
        return PassEnd.DONE

    def record(
        self, plan: BatchPlan, active: dict[str, JobWork], finished: dict[int, str], scores: dict[int, float]
    ) -> None:
        """Store what the plan's entries `finished` (worker.translation.round.recording)."""
        guard, outcomes = self.settings.output_guard, self.outcomes
        record(
            self.engine, guard, self.cache, self.namespace, outcomes, plan, active, finished, scores, self.untranslated
        )

    def fit_to_memory(self, plan: BatchPlan, batch: list[int], active: dict[str, JobWork]) -> list[list[int]]:
        """The batch in parts that fit in free memory; the jobs of a piece too big for any leave `active`,
        failed."""
        memory = probe_memory(self.settings.cgroup_root)
        available = memory.available_bytes - self.settings.memory_headroom_mb * 2**20
        parts, too_big = fit_to_memory(batch, plan.lengths, available, self.engine.estimate_batch_bytes)
        for job_id in plan.jobs_of(too_big) & active.keys():
            fail(self.outcomes, job_id, ErrorCode.RESOURCE_EXHAUSTED, TOO_BIG)
            active.pop(job_id)
        return parts

    def decode(self, plan: BatchPlan, part: list[int], watch: ArrivalWatch | None = None, scores: bool = False) -> None:
        """Translate one part of a batch and keep its output in the plan, with each piece's confidence when a job
        of the pass asked for scores (BatchInterrupted: the watch stopped it)."""
        if self.settings.test_hooks:
            run_fault_hooks(plan.texts(part))
        started = time.perf_counter()
        # Asked for only when wanted: greedy decoding pays a log-sum-exp over the vocabulary a step for them
        # (bench/confidence.py: +5 to +14 % at beam 1, +2 to +13 % at beam 4).
        confidences: list[float] | None = [] if scores else None
        try:
            texts = self.engine.translate_ids(plan.ids(part), interrupt=watch, scores=confidences)
        except BatchInterrupted:
            log.info("batch of %d stopped after %.3fs: jobs arrived", len(part), time.perf_counter() - started)
            raise
        self.outcomes.stats.observe_batch(len(part), time.perf_counter() - started)
        plan.keep(part, texts, confidences)

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
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, TypeVar

import redis
from celery.exceptions import SoftTimeLimitExceeded

from shared.cache import normalise
from shared.jobs import Job
from shared.memory import probe_memory
from shared.splitter import Segment, join_translations, sentences, split_text
from worker.batching import BatchInterrupted, fit_to_memory, plan_batches

if TYPE_CHECKING:
    from worker.context import WorkerContext

log = logging.getLogger(__name__)
T = TypeVar("T")

# A small batch is asked to stop for arrivals during this many of its first decoding steps; a round
# takes in arrivals this many times at most (each at least doubles the batch, so few are ever needed).
REGROUP_STEPS = 8
MAX_REGROUPS = 4

# Test-only hooks (TRANSQ_TEST_HOOKS=1): a sentence holding POISON kills the worker
# process; one holding SLEEP<n> sleeps n seconds per batch. Off in production.
POISON_MARK = "TRANSQ-POISON"
SLEEP_MARK = "TRANSQ-SLEEP"


class RoundError(Exception):
    """A job-level failure with an error code for the client."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class JobWork:
    """A claimed job while its sentences are translated."""

    job: Job
    segments: list[list[Segment]]
    sentences: list[str]
    translations: list[str | None]
    cached: int = 0

    @property
    def done(self) -> int:
        return sum(t is not None for t in self.translations)

    @property
    def complete(self) -> bool:
        return all(t is not None for t in self.translations)

    def assemble(self) -> list[str]:
        out, position = [], 0
        for segs in self.segments:
            count = sum(s.translate for s in segs)
            out.append(join_translations(segs, self.translations[position : position + count]))
            position += count
        return out


@dataclass
class RoundResult:
    retry_after: float | None = None
    jobs: list[str] = field(default_factory=list)


class LeaseKeeper:
    """Renews the leases of the jobs in a round from a background thread."""

    def __init__(self, ctx: WorkerContext, job_ids: list[str]):
        self.ctx = ctx
        self.job_ids = list(job_ids)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def add(self, job_ids: list[str]) -> None:
        self.job_ids = self.job_ids + job_ids  # one assignment: the renewing thread sees old or new

    def _run(self) -> None:
        interval = max(0.2, self.ctx.settings.lease_seconds / 3)
        while not self._stop.wait(interval):
            try:
                self.ctx.store.renew_leases(self.job_ids, self.ctx.worker_id, self.ctx.settings.lease_seconds)
            except redis.RedisError as exc:
                log.warning("could not renew leases: %s", exc)


def run_round(ctx: WorkerContext, job_id: str) -> RoundResult:
    """Claim the job (and waiting ones), translate, store results."""
    settings = ctx.settings
    claim = _redis_retry(
        ctx, lambda: ctx.store.claim(job_id, ctx.worker_id, settings.lease_seconds, settings.max_deliveries)
    )
    claimed: list[str] = []
    solo = False
    if claim.outcome == "leased":
        return RoundResult(retry_after=settings.lease_seconds)
    if claim.outcome == "lost":
        log.error("job %s failed: worker lost %d times", job_id, claim.attempts - 1, extra={"job_id": job_id})
        ctx.stats.incr("jobs_failed")
    if claim.outcome == "claimed":
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
        claimed += _claim_waiting(ctx, budget=settings.max_round_sentences, taken=claimed)
    if not claimed:
        return RoundResult()
    with LeaseKeeper(ctx, claimed) as keeper:
        own = job_id if job_id in claimed else None
        _translate_jobs(ctx, claimed, own_job_id=own, keeper=None if solo else keeper)
    return RoundResult(jobs=keeper.job_ids)


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
            return self.ctx.store.pending_count() >= self.batch_size
        except redis.RedisError:
            return False


def _claim_waiting(ctx: WorkerContext, budget: int, taken: list[str], used: int | None = None) -> list[str]:
    """Claim the oldest waiting jobs whose sentences fit in what is left of the budget (`used`
    sentences, by default those of the first of `taken`)."""
    store, settings = ctx.store, ctx.settings
    candidates = [j for j in store.oldest_pending(64) if j not in taken]
    if not candidates:
        return []
    own = taken[:1] if used is None else []
    pipe = ctx.redis.pipeline(transaction=False)
    for job_id in own + candidates:
        pipe.hget(ctx.keys.job(job_id), "sentences_total")
    sizes = pipe.execute()
    if used is None:
        used = int(sizes.pop(0) or 0) if own else 0
    claimed: list[str] = []
    for candidate, size in zip(candidates, sizes):
        size = int(size or 0)
        if used and used + size > budget:
            continue
        result = store.claim(candidate, ctx.worker_id, settings.lease_seconds, settings.max_deliveries, fresh_only=True)
        if result.outcome == "claimed":
            claimed.append(candidate)
            used += size
    return claimed


def _load(ctx: WorkerContext, job_ids: list[str]) -> list[JobWork]:
    pipe = ctx.redis.pipeline(transaction=False)
    for job_id in job_ids:
        pipe.hgetall(ctx.keys.job(job_id))
    works = []
    for data in pipe.execute():
        if not data.get("status"):
            continue
        job = Job.from_hash(data)
        if job.attempts == 1:
            ctx.stats.observe("queue_wait_seconds", max(0.0, time.time() - job.submitted))
        segments = [split_text(text, ctx.settings.max_sentence_chars) for text in job.texts]
        flat = [normalise(s) for segs in segments for s in sentences(segs)]
        works.append(JobWork(job, segments, flat, [None] * len(flat)))
    return works


def _translate_jobs(
    ctx: WorkerContext, job_ids: list[str], own_job_id: str | None, keeper: LeaseKeeper | None = None
) -> None:
    """Translate the claimed jobs; with a lease keeper, also take in jobs that arrive while a small
    batch starts (their leases join the keeper's)."""
    works = _load(ctx, job_ids)
    active = {w.job.id: w for w in works}
    try:
        _take_in(ctx, works, active)
        regroups = MAX_REGROUPS if keeper is not None else 0
        first: frozenset[str] = frozenset()
        while active and _translate_misses(ctx, active, regroup=regroups > 0, first=first):
            regroups -= 1
            first = frozenset(active)  # the stopped batch's jobs go first in the round's new plan
            used = sum(len(w.sentences) for w in active.values())
            arrivals = _claim_waiting(ctx, ctx.settings.max_round_sentences, taken=list(active), used=used)
            if not arrivals or keeper is None:
                regroups = 0  # others took them: finish what this round has
                continue
            keeper.add(arrivals)
            new = _load(ctx, arrivals)
            works += new
            active.update((w.job.id, w) for w in new)
            _take_in(ctx, new, active)
            log.info("took %d arriving job(s) into the round", len(new))
    except SoftTimeLimitExceeded:
        for work in list(active.values()):
            if work.job.id == own_job_id:
                _fail(ctx, work.job.id, "timeout", f"the job ran longer than {ctx.settings.task_soft_time_limit}s")
            else:
                ctx.store.release(work.job.id, ctx.worker_id)
    except Exception:
        log.exception("translation round of %d job(s) failed", len(active))
        for work in active.values():
            if work.job.id == own_job_id and len(works) == 1:
                _fail(ctx, work.job.id, "internal_error", "the worker could not translate this job")
            else:
                # Counted as an attempt, so it runs alone next time and cannot sink others again.
                _redis_retry(ctx, lambda jid=work.job.id: ctx.redis.delete(ctx.keys.lease(jid)))
        if own_job_id in active and len(works) > 1:
            retry = ctx.store.claim(own_job_id, ctx.worker_id, ctx.settings.lease_seconds, ctx.settings.max_deliveries)
            if retry.outcome == "claimed":
                _translate_jobs(ctx, [own_job_id], own_job_id)


def _take_in(ctx: WorkerContext, works: list[JobWork], active: dict[str, JobWork]) -> None:
    """Fill the jobs' sentences from the cache and finish those it completes."""
    _fill_from_cache(ctx, works)
    for work in works:
        if work.complete:
            _finish(ctx, work)
            active.pop(work.job.id)


def _fill_from_cache(ctx: WorkerContext, works: list[JobWork]) -> None:
    unique = list(dict.fromkeys(s for w in works for s in w.sentences))
    found = dict(zip(unique, ctx.cache.get_many(ctx.namespace, unique)))
    hits = 0
    for work in works:
        for i, sentence in enumerate(work.sentences):
            if found.get(sentence) is not None:
                work.translations[i] = found[sentence]
                work.cached += 1
        hits += work.cached
    ctx.stats.incr("cache_hits", hits)
    ctx.stats.incr("cache_misses", sum(len(w.sentences) for w in works) - hits)


def _translate_misses(
    ctx: WorkerContext, active: dict[str, JobWork], regroup: bool = False, first: frozenset[str] = frozenset()
) -> bool:
    """Translate the active jobs' untranslated sentences in batches, those holding sentences of the
    jobs in `first` first. With `regroup`, a small last batch may stop for arrivals: True then, its
    sentences left untranslated for the next call."""
    engine, settings = ctx.engine, ctx.settings
    needed: dict[str, list[tuple[str, int]]] = {}
    for work in active.values():
        for i, (sentence, translation) in enumerate(zip(work.sentences, work.translations)):
            if translation is None:
                needed.setdefault(sentence, []).append((work.job.id, i))
    misses = list(needed)
    _run_test_hooks(ctx, misses)
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
    batches = plan_batches(lengths, tokens, rows)
    if first:
        batches.sort(key=lambda b: not any(jid in first for u in b for jid, _ in needed[misses[units[u][0]]]))
    for number, batch in enumerate(batches):
        _drop_cancelled(ctx, active)
        batch = [u for u in batch if any(jid in active for jid, _ in needed[misses[units[u][0]]])]
        if not batch:
            continue
        memory = probe_memory(settings.cgroup_root)
        available = memory.available_bytes - settings.memory_headroom_mb * 2**20
        parts, too_big = fit_to_memory(batch, lengths, available, engine.estimate_batch_bytes)
        for unit in too_big:
            for job_id, _ in needed[misses[units[unit][0]]]:
                if job_id in active:
                    _fail(
                        ctx,
                        job_id,
                        "resource_exhausted",
                        "a sentence of this job needs more memory than the worker has free",
                    )
                    active.pop(job_id)
        small_last = regroup and number == len(batches) - 1 and len(parts) == 1 and 2 * len(parts[0]) <= rows
        for part in parts:
            started = time.perf_counter()
            watch = ArrivalWatch(ctx, len(part)) if small_last else None
            try:
                texts = engine.translate_ids([units[u][2] for u in part], interrupt=watch)
            except BatchInterrupted:
                log.info("batch of %d stopped after %.3fs: jobs arrived", len(part), time.perf_counter() - started)
                return True
            ctx.stats.observe_batch(len(part), time.perf_counter() - started)
            for unit, text in zip(part, texts):
                outputs[units[unit][0]][units[unit][1]] = text
        finished = {}
        for unit in batch:
            s_index = units[unit][0]
            pieces = outputs[s_index]
            if all(p is not None for p in pieces) and misses[s_index] not in finished:
                finished[misses[s_index]] = " ".join(p for p in pieces if p)
        _record(ctx, active, needed, finished)
    return False


def _record(
    ctx: WorkerContext, active: dict[str, JobWork], needed: dict[str, list[tuple[str, int]]], finished: dict[str, str]
) -> None:
    """Cache new translations, update progress, finish complete jobs."""
    if not finished:
        return
    ctx.cache.put_many(ctx.namespace, finished)
    ctx.stats.incr("sentences_translated", len(finished))
    touched = set()
    for sentence, translation in finished.items():
        for job_id, index in needed[sentence]:
            if job_id in active:
                active[job_id].translations[index] = translation
                touched.add(job_id)
    for job_id in touched:
        work = active[job_id]
        if work.complete:
            _finish(ctx, work)
            active.pop(job_id)
        else:
            _redis_retry(ctx, lambda jid=job_id, done=work.done: ctx.store.set_progress(jid, done))


def _drop_cancelled(ctx: WorkerContext, active: dict[str, JobWork]) -> None:
    if not active:
        return
    ids = list(active)
    pipe = ctx.redis.pipeline(transaction=False)
    for job_id in ids:
        pipe.hget(ctx.keys.job(job_id), "status")
    for job_id, status in zip(ids, _redis_retry(ctx, pipe.execute)):
        if status != "running":
            log.info(
                "job %s is %s: its remaining sentences are dropped", job_id, status or "gone", extra={"job_id": job_id}
            )
            active.pop(job_id)


def _finish(ctx: WorkerContext, work: JobWork) -> None:
    outcome = _redis_retry(ctx, lambda: ctx.store.succeed(work.job.id, work.assemble(), work.cached, work.done))
    if outcome == "ok":
        ctx.stats.job_finished("succeeded", work.job.submitted)
        log.info(
            "job %s succeeded (%d sentences, %d cached)",
            work.job.id,
            len(work.sentences),
            work.cached,
            extra={"job_id": work.job.id},
        )


def _fail(ctx: WorkerContext, job_id: str, code: str, message: str) -> None:
    outcome = _redis_retry(ctx, lambda: ctx.store.fail(job_id, code, message))
    if outcome == "ok":
        ctx.stats.job_finished("failed", None)
        log.warning("job %s failed: %s: %s", job_id, code, message, extra={"job_id": job_id})


def _run_test_hooks(ctx: WorkerContext, misses: list[str]) -> None:
    if not ctx.settings.test_hooks:
        return
    for sentence in misses:
        if POISON_MARK in sentence:
            log.error("test hook: poison sentence, killing this worker process")
            os.kill(os.getpid(), signal.SIGKILL)
        if SLEEP_MARK in sentence:
            digits = "".join(ch for ch in sentence.split(SLEEP_MARK, 1)[1][:4] if ch.isdigit())
            time.sleep(int(digits or 1))


def _redis_retry(ctx: WorkerContext, call: Callable[[], T], grace_seconds: float = 120.0) -> T:
    """Run a job-store call, waiting out a broker outage (a restart) instead of losing the result."""
    deadline = time.monotonic() + grace_seconds
    delay = 0.2
    while True:
        try:
            return call()
        except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError) as exc:
            if time.monotonic() > deadline:
                raise
            log.warning("broker Redis unavailable (%s); retrying in %.1fs", exc, delay)
            time.sleep(delay)
            delay = min(delay * 2, 5.0)

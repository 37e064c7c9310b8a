"""One claimed job while its sentences are translated: loading it, filling it from what is already
translated, and storing its outcome."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shared.cache import normalise
from shared.error_codes import ErrorCode
from shared.job_status import Move
from shared.jobs import Job
from shared.splitter import Segment, join_translations, sentences, split_text

if TYPE_CHECKING:
    from worker.scheduling.context import WorkerContext

log = logging.getLogger(__name__)


@dataclass
class JobWork:
    """A claimed job while its sentences are translated."""

    job: Job
    fence: int  # its claim's (WorkerContext.claim): every write for the job carries it
    segments: list[list[Segment]]
    sentences: list[str]
    translations: list[str | None]
    cached: int = 0
    saved: set[int] = field(default_factory=set)  # indices whose translation is in the partial hash
    warnings: list[dict[str, Any]] = field(default_factory=list)  # as stored with the job
    warnings_saved: bool = True

    @property
    def done(self) -> int:
        return sum(t is not None for t in self.translations)

    @property
    def complete(self) -> bool:
        return all(t is not None for t in self.translations)

    @property
    def remaining(self) -> int:
        return len(self.translations) - self.done

    def unsaved(self) -> dict[int, str]:
        """Translations not yet recorded with the job's progress; they count as saved from now."""
        new = {i: t for i, t in enumerate(self.translations) if t is not None and i not in self.saved}
        self.saved.update(new)
        return new

    def warn(self, index: int, warning: dict[str, Any]) -> None:
        self.warnings.append({**warning, "sentence": index})
        self.warnings_saved = False

    def unsaved_warnings(self) -> list[dict[str, Any]] | None:
        """All the job's warnings when some are not yet stored with it, else None."""
        if self.warnings_saved:
            return None
        self.warnings_saved = True
        return self.warnings

    def assemble(self) -> list[str]:
        out, position = [], 0
        for segs in self.segments:
            count = sum(s.translate for s in segs)
            out.append(join_translations(segs, self.translations[position : position + count]))
            position += count
        return out


def load_works(ctx: WorkerContext, job_ids: list[str]) -> list[JobWork]:
    """The claimed jobs, split into sentences, with the translations they already have (their own
    partial results first, then the sentence cache)."""
    jobs = ctx.broker.retry(lambda: ctx.store.get_many(job_ids))
    partials = ctx.broker.retry(lambda: ctx.store.partial_translations(job_ids))
    works = []
    for job, partial in zip(jobs, partials):
        if job is None:
            continue
        if job.attempts == 1 and not partial:
            ctx.stats.observe("queue_wait_seconds", max(0.0, time.time() - job.submitted))
        segments = [split_text(text, ctx.settings.max_sentence_chars) for text in job.texts]
        flat = [normalise(s) for segs in segments for s in sentences(segs)]
        translations: list[str | None] = [partial.get(i) for i in range(len(flat))]
        # A resumed job's cache hits so far were recorded with its progress.
        works.append(
            JobWork(
                job,
                ctx.fences.get(job.id, 0),
                segments,
                flat,
                translations,
                cached=job.cached_sentences if partial else 0,
                saved=set(partial),
                warnings=list(job.warnings),
            )
        )
    _fill_from_cache(ctx, works)
    return works


def _fill_from_cache(ctx: WorkerContext, works: list[JobWork]) -> None:
    missing = [w for w in works if not w.complete]
    looked_up = sum(w.remaining for w in missing)
    unique = list(dict.fromkeys(s for w in missing for s, t in zip(w.sentences, w.translations) if t is None))
    found = dict(zip(unique, ctx.cache.get_many(ctx.namespace, unique))) if unique else {}
    hits = 0
    for work in missing:
        for i, sentence in enumerate(work.sentences):
            if work.translations[i] is None and found.get(sentence) is not None:
                work.translations[i] = found[sentence]
                work.cached += 1
                hits += 1
    ctx.stats.incr("cache_hits", hits)
    ctx.stats.incr("cache_misses", looked_up - hits)


def finish(ctx: WorkerContext, work: JobWork) -> None:
    if ctx.broker.retry(lambda: ctx.documents.record(work.job.id)):  # the document stage renders it
        outcome = ctx.broker.retry(
            lambda: ctx.store.translated(
                work.job.id, work.assemble(), work.cached, work.done, work.warnings, fence=work.fence
            )
        )
        if outcome == Move.FENCED:
            taken_over(ctx, work.job.id, "result")
        if outcome != "ok":
            return
        try:
            ctx.send_to_document_stage(work.job.id)
        except Exception as exc:  # noqa: BLE001 - never leave the job `rendering` with no message on its way
            log.error("job %s: cannot reach the document stage: %s", work.job.id, exc, extra={"job_id": work.job.id})
            fail(ctx, work.job.id, ErrorCode.UNAVAILABLE, "the translated document could not be sent to be rendered")
            return
        log.info("job %s translated; the document stage renders it", work.job.id, extra={"job_id": work.job.id})
        return
    outcome = ctx.broker.retry(
        lambda: ctx.store.succeed(work.job.id, work.fence, work.assemble(), work.cached, work.done, work.warnings)
    )
    if outcome == Move.FENCED:
        taken_over(ctx, work.job.id, "result")
    elif outcome == Move.OK:
        ctx.stats.job_finished("succeeded", work.job.submitted)
        log.info(
            "job %s succeeded (%d sentences, %d cached)",
            work.job.id,
            len(work.sentences),
            work.cached,
            extra={"job_id": work.job.id},
        )


def fail(ctx: WorkerContext, job_id: str, code: ErrorCode, message: str) -> None:
    """Fail a job this process claimed (with its claim's fence)."""
    outcome = ctx.broker.retry(lambda: ctx.store.fail(job_id, code, message, ctx.fences.get(job_id, 0)))
    if outcome == Move.FENCED:
        taken_over(ctx, job_id, "failure")
    elif outcome == Move.OK:
        ctx.stats.job_finished("failed", None)
        log.warning("job %s failed: %s: %s", job_id, code, message, extra={"job_id": job_id})


def taken_over(ctx: WorkerContext, job_id: str, what: str) -> None:
    """A write for a job this process claimed was refused: the job was claimed again since (this worker
    stalled or was cut off past its lease, and another took it over). The caller drops the job; it is
    neither failed nor counted here: its result is the other worker's."""
    ctx.stats.incr("fenced_writes")
    log.warning(
        "job %s was taken over by another worker: this worker's late %s (claim %d) was refused; dropping it",
        job_id,
        what,
        ctx.fences.get(job_id, 0),
        extra={"job_id": job_id},
    )

"""What a round stores for the jobs it holds, each write with the job's fence: progress, success (or, for a
document job, translated: the document stage renders it), failure, or parked to resume later. A write
refused because the job was taken over by another worker drops the job here."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from shared.errors import ErrorCode
from shared.store.job_claims import Progress
from shared.store.job_status import Move
from shared.store.jobs import Translation
from worker.translation.liveness.wakeups import wake_key_seconds
from worker.translation.round.job_work import JobWork

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext

log = logging.getLogger(__name__)


def save_progress(ctx: WorkerContext, work: JobWork) -> bool:
    """Record the job's progress; False when it was refused (the job was taken over: drop it)."""
    new, warnings = work.unsaved(), work.unsaved_warnings()
    progress = Progress(work.done, work.cached, new, work.unsaved_scores(new), warnings)
    outcome = ctx.job_claims.set_progress(work.job.id, work.fence, progress)
    return _not_taken_over(ctx, work.job.id, outcome, "progress")


def finish(ctx: WorkerContext, work: JobWork) -> None:
    """Store a complete job's result: it succeeds, or a document job goes to the document stage."""
    job_id = work.job.id
    translation = Translation(work.assemble(), work.done, work.cached, work.warnings, work.assemble_scores())
    outcome = ctx.store.translated(work.job, work.fence, translation)
    if work.job.document is not None:  # a document job: rendered next
        if not _not_taken_over(ctx, job_id, outcome, "result") or outcome != Move.OK:
            return
        try:
            ctx.wakeups.send_to_document_stage(job_id)
        except Exception as exc:  # noqa: BLE001 - never leave the job `rendering` with no message on its way
            log.error("job %s: cannot reach the document stage: %s", job_id, exc, extra={"job_id": job_id})
            fail(ctx, job_id, ErrorCode.UNAVAILABLE, "the translated document could not be sent to be rendered")
            return
        log.info("job %s translated; the document stage renders it", job_id, extra={"job_id": job_id})
        return
    if _not_taken_over(ctx, job_id, outcome, "result") and outcome == Move.OK:
        ctx.stats.job_finished("succeeded", work.job.submitted)
        log.info(
            "job %s succeeded (%d sentences, %d cached)",
            job_id,
            len(work.sentences),
            work.cached,
            extra={"job_id": job_id},
        )


def fail(ctx: WorkerContext, job_id: str, code: ErrorCode, message: str) -> None:
    """Fail a job this process claimed (with its claim's fence); the store counts it in `jobs_failed`."""
    outcome = ctx.store.fail(job_id, code, message, ctx.claims.fence(job_id))
    if _not_taken_over(ctx, job_id, outcome, "failure") and outcome == Move.OK:
        log.warning("job %s failed: %s: %s", job_id, code, message, extra={"job_id": job_id})


def park(ctx: WorkerContext, active: dict[str, JobWork]) -> None:
    """Give the unfinished jobs back to the pending set with their translations so far, and send each a
    wake-up unless one is already on its way (a job parked again and again must not pile wake-ups in front
    of the jobs waiting behind it). If one cannot be sent, an idle worker re-sends it later
    (worker.translation.liveness.sweeps.wake_forgotten_jobs)."""
    ttl = wake_key_seconds(ctx.settings)
    for work in active.values():
        if not save_progress(ctx, work):
            continue  # taken over by another worker: not ours to give back
        job_id = work.job.id
        if ctx.job_claims.park(job_id, ctx.route.key, ctx.worker_id, work.fence) and ctx.job_claims.mark_woken(
            job_id, ttl
        ):
            try:
                ctx.wakeups.wake(job_id)
            except Exception as exc:  # noqa: BLE001 - the job is safe in the pending set
                log.warning("could not send a wake-up for parked job %s: %s", job_id, exc)
    log.info("parked %d unfinished job(s)", len(active), extra={"job_id": None})


def _not_taken_over(ctx: WorkerContext, job_id: str, outcome: Move, what: str) -> bool:
    """False when a write for a job this process claimed was refused: the job was claimed again since (this
    worker stalled or was cut off past its lease, and another took it over). The caller drops the job; it is
    neither failed nor counted here: its result is the other worker's."""
    if outcome != Move.FENCED:
        return True
    ctx.stats.incr("fenced_writes")
    log.warning(
        "job %s was taken over by another worker: this worker's late %s (claim %d) was refused; dropping it",
        job_id,
        what,
        ctx.claims.fence(job_id),
        extra={"job_id": job_id},
    )
    return False

"""What a round stores for the jobs it holds, each write with the job's fence: progress, success (or, for a
document job, translated: the document stage renders it), failure, or parked to resume later. A write
refused because the job was taken over by another worker drops the job here."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from shared.errors import ErrorCode
from shared.store.job_claims import Progress
from shared.store.job_events import Sentences
from shared.store.job_status import Move
from shared.store.jobs import Translation
from shared.store.stats import Stats
from worker.translation.liveness.broker_health import RetryingStore
from worker.translation.liveness.wakeups import Wakeups
from worker.translation.round.claims import Claims
from worker.translation.round.job_work import JobWork

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcomes:
    """Where a round's outcomes go, made once per process: the job store (each call waiting out an outage),
    the claims whose fences the writes carry (and whose store takes progress and parked jobs), statistics, and
    for a document job the document stage's queue (`wakeups`, which also wakes a parked job)."""

    store: RetryingStore
    claims: Claims
    stats: Stats
    wakeups: Wakeups


def save_progress(out: Outcomes, work: JobWork) -> bool:
    """Record the job's progress; False when it was refused (the job was taken over: drop it)."""
    new, warnings = work.unsaved(), work.unsaved_warnings()
    progress = Progress(work.done, work.cached, new, work.unsaved_scores(new), warnings, work.unsaved_fidelity(new))
    outcome = out.claims.store.set_progress(work.job.id, work.fence, progress)
    return _not_taken_over(out, work.job.id, outcome, "progress")


def finish(out: Outcomes, work: JobWork) -> None:
    """Store a complete job's result: it succeeds, or a document job goes to the document stage. Its sentences
    not yet recorded with its progress get their events in the same call."""
    job_id = work.job.id
    translation = Translation(
        work.assemble(),
        work.done,
        work.cached,
        work.warnings,
        work.assemble_scores(),
        work.suggestions,
        work.assemble_fidelity(),
    )
    new = work.unsaved()
    outcome = out.store.translated(work.job, work.fence, translation, Sentences(new, work.unsaved_scores(new)))
    if work.job.document is not None:  # a document job: rendered next
        if not _not_taken_over(out, job_id, outcome, "result") or outcome != Move.OK:
            return
        try:
            out.wakeups.send_to_document_stage(job_id)
        except Exception as exc:  # noqa: BLE001 - never leave the job `rendering` with no message on its way
            log.error("job %s: cannot reach the document stage: %s", job_id, exc, extra={"job_id": job_id})
            fail(out, job_id, ErrorCode.UNAVAILABLE, "the translated document could not be sent to be rendered")
            return
        log.info("job %s translated; the document stage renders it", job_id, extra={"job_id": job_id})
        return
    if _not_taken_over(out, job_id, outcome, "result") and outcome == Move.OK:
        out.stats.job_finished("succeeded", work.job.submitted)
        log.info(
            "job %s succeeded (%d sentences, %d cached)",
            job_id,
            len(work.sentences),
            work.cached,
            extra={"job_id": job_id},
        )


def fail(out: Outcomes, job_id: str, code: ErrorCode, message: str) -> None:
    """Fail a job this process claimed (with its claim's fence); the store counts it in `jobs_failed`."""
    outcome = out.store.fail(job_id, code, message, out.claims.fence(job_id))
    if _not_taken_over(out, job_id, outcome, "failure") and outcome == Move.OK:
        log.warning("job %s failed: %s: %s", job_id, code, message, extra={"job_id": job_id})


def park(out: Outcomes, active: dict[str, JobWork]) -> None:
    """Give the unfinished jobs back to the pending set with their translations so far, and send each a
    wake-up unless one is already on its way (a job parked again and again must not pile wake-ups in front
    of the jobs waiting behind it). If one cannot be sent, an idle worker re-sends it later
    (worker.translation.liveness.wakeups.Sweeps.wake_forgotten_jobs)."""
    ttl = out.wakeups.key_seconds
    route_key, worker_id = out.claims.route_key, out.claims.worker_id
    for work in active.values():
        if not save_progress(out, work):
            continue  # taken over by another worker: not ours to give back
        job_id = work.job.id
        claims = out.claims.store
        if claims.park(job_id, route_key, worker_id, work.fence) and claims.mark_woken(job_id, ttl):
            try:
                out.wakeups.wake(job_id)
            except Exception as exc:  # noqa: BLE001 - the job is safe in the pending set
                log.warning("could not send a wake-up for parked job %s: %s", job_id, exc)
    log.info("parked %d unfinished job(s)", len(active), extra={"job_id": None})


def _not_taken_over(out: Outcomes, job_id: str, outcome: Move, what: str) -> bool:
    """False when a write for a job this process claimed was refused: the job was claimed again since (this
    worker stalled or was cut off past its lease, and another took it over). The caller drops the job; it is
    neither failed nor counted here: its result is the other worker's."""
    if outcome != Move.FENCED:
        return True
    out.stats.incr("fenced_writes")
    log.warning(
        "job %s was taken over by another worker: this worker's late %s (claim %d) was refused; dropping it",
        job_id,
        what,
        out.claims.fence(job_id),
        extra={"job_id": job_id},
    )
    return False

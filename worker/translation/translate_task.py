"""The worker's one task, `transq.translate_job`: a job's message wakes a round (worker.translation.round.rounds)."""

from __future__ import annotations

import logging
from typing import Any

import redis
from celery import Task
from celery.exceptions import TimeLimitExceeded

from shared.errors import ErrorCode
from shared.logging_setup import current_job_id
from shared.settings import Settings
from shared.store.job_record import is_job_id
from worker.translation.context import WorkerContext
from worker.translation.liveness.hard_timeouts import store_timeout
from worker.translation.round.job_outcomes import fail
from worker.translation.round.rounds import run_round

log = logging.getLogger(__name__)


class ProcessContext:
    """A process's one WorkerContext, made on first use (the model in it is loaded once per process)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.made: WorkerContext | None = None

    def get(self) -> WorkerContext:
        if self.made is None:
            self.made = WorkerContext(self.settings)
        return self.made


class TranslateTask(Task):
    process: ProcessContext  # set by worker.translation.celery_app.create_app

    @property
    def context(self) -> WorkerContext:
        return self.process.get()

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        # Called in the main process when the hard time limit killed the pool process.
        if isinstance(exc, TimeLimitExceeded) and args and isinstance(args[0], str):
            store_timeout(self.context, args[0])


def translate_job(self: TranslateTask, job_id: Any) -> None:
    """Translate a job (and any waiting jobs that fit in the same batches)."""
    if not isinstance(job_id, str) or not is_job_id(job_id):
        log.error("ignoring a message with a malformed job id: %r", job_id)
        return
    ctx = self.context
    token = current_job_id.set(job_id)
    try:
        with ctx.activity.round():
            result = run_round(ctx, job_id)
    except redis.RedisError as exc:
        # The broker stayed away longer than a store call waits: try the job again later.
        log.warning("broker Redis unavailable (%s); job %s goes back to the queue", exc, job_id)
        raise self.retry(countdown=2, exc=exc) from None
    except Exception:
        log.exception("job %s failed unexpectedly", job_id)
        if ctx.claims.fence(job_id):  # only a job this process claimed (and still holds: its fence)
            fail(ctx, job_id, ErrorCode.INTERNAL_ERROR, "the worker could not translate this job")
        return
    finally:
        current_job_id.reset(token)
    if result.retry_after:
        # Another worker holds the job's lease; look again when it would have expired.
        raise self.retry(countdown=result.retry_after)

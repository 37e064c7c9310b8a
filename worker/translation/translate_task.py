"""The worker's one task, `transq.translate_job`: a job's message wakes a round (worker.translation.round.rounds)."""

from __future__ import annotations

import logging
from typing import Any

import redis
from celery import Task
from celery.exceptions import TimeLimitExceeded

from shared.errors import ErrorCode
from shared.logging_setup import current_job_id
from shared.store.job_record import is_job_id
from worker.translation.liveness.hard_timeouts import store_timeout
from worker.translation.process_parts import PerProcess, ProcessParts
from worker.translation.round.job_outcomes import fail

log = logging.getLogger(__name__)


class TranslateTask(Task):
    process: PerProcess  # set by worker.translation.celery_app.create_app

    @property
    def parts(self) -> ProcessParts:
        return self.process.get()

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        # Called in the main process when the hard time limit killed the pool process.
        if isinstance(exc, TimeLimitExceeded) and args and isinstance(args[0], str):
            parts = self.parts
            store_timeout(parts.store.once, parts.job_claims.once, parts.broker, parts.settings, args[0])


def translate_job(self: TranslateTask, job_id: Any) -> None:
    """Translate a job (and any waiting jobs that fit in the same batches)."""
    if not isinstance(job_id, str) or not is_job_id(job_id):
        log.error("ignoring a message with a malformed job id: %r", job_id)
        return
    parts = self.parts
    token = current_job_id.set(job_id)
    try:
        with parts.activity.round():
            result = parts.rounds.run(job_id)
    except redis.RedisError as exc:
        # The broker stayed away longer than a store call waits: try the job again later.
        log.warning("broker Redis unavailable (%s); job %s goes back to the queue", exc, job_id)
        raise self.retry(countdown=2, exc=exc) from None
    except Exception:
        log.exception("job %s failed unexpectedly", job_id)
        if parts.claims.fence(job_id):  # only a job this process claimed (and still holds: its fence)
            fail(parts.outcomes, job_id, ErrorCode.INTERNAL_ERROR, "the worker could not translate this job")
        return
    finally:
        current_job_id.reset(token)
    if result.retry_after:
        # Another worker holds the job's lease; look again when it would have expired.
        raise self.retry(countdown=result.retry_after)

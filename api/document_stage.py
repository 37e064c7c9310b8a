"""The document stage: `celery -A api.document_stage worker --concurrency 1` (the `document` service).

Parsing an uploaded document and rendering its translation run here, never in the API's request workers:
one task at a time, in a pool process whose address space may grow by at most TRANSQ_DOCUMENT_MEMORY_MB
(a MemoryError past it) and which gets TRANSQ_DOCUMENT_TIME_LIMIT seconds per document (a soft limit,
then the process is killed 10 s later). A document that needs more fails `document_too_complex`; one
whose process dies fails the same way and is never delivered again (it would kill the next process too),
and the pool process is replaced, so the stage keeps working. No model: it never imports torch.
"""

from __future__ import annotations

import logging
import os
import resource
from typing import Any

import psutil
import redis
from billiard.exceptions import WorkerLostError
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from celery.signals import task_failure, worker_process_init

from api.app_services import Services
from api.document_work import StageFailure, run_document_job
from shared.celery_factory import DOCUMENT_TASK, make_celery
from shared.error_codes import ErrorCode
from shared.job_status import Move
from shared.jobs import JobStore, is_job_id
from shared.keys import Keys
from shared.logging_setup import configure_logging, current_job_id
from shared.redis_client import broker_redis
from shared.settings import Settings

log = logging.getLogger(__name__)
settings = Settings.from_env()
configure_logging(settings.log_format, settings.log_level)
app = make_celery(settings, name="transq-documents")
app.conf.update(
    task_default_queue=Keys(settings.key_prefix).documents_queue,
    task_soft_time_limit=settings.document_time_limit,
    task_time_limit=settings.document_time_limit + 10,
    # A document that killed its process fails; it is not delivered again (see the module's doc).
    task_reject_on_worker_lost=False,
    # A process that kept much of what a document made it allocate is replaced after that task.
    worker_max_memory_per_child=settings.document_memory_mb * 1024 // 2,
    worker_proc_alive_timeout=60,
)
_TOO_COMPLEX = {
    "time": f"the document took longer than {settings.document_time_limit}s to process "
    "(TRANSQ_DOCUMENT_TIME_LIMIT): it is too complex",
    "memory": f"the document needed more than {settings.document_memory_mb} MiB to process "
    "(TRANSQ_DOCUMENT_MEMORY_MB): it is too complex",
    "lost": "processing the document killed its process: it is too complex",
}


class DocumentTask(Task):
    """Holds the pool process's services (job store, documents, cache, producer)."""

    _services: Services | None = None

    @property
    def services(self) -> Services:
        if DocumentTask._services is None:
            DocumentTask._services = Services(settings)
        return DocumentTask._services


@app.task(bind=True, base=DocumentTask, name=DOCUMENT_TASK, max_retries=None)
def document_job(self: DocumentTask, job_id: Any) -> None:
    """Parse the job's document (then queue it for translation), or render its translation."""
    if not is_job_id(job_id):
        log.error("ignoring a message with a malformed job id: %r", job_id)
        return
    token = current_job_id.set(job_id)
    try:
        run_document_job(self.services, job_id)
    except StageFailure as exc:
        _fail(self.services.store, job_id, exc.code, exc.message)
    except SoftTimeLimitExceeded:
        _fail(self.services.store, job_id, ErrorCode.DOCUMENT_TOO_COMPLEX, _TOO_COMPLEX["time"])
    except MemoryError:
        _fail(self.services.store, job_id, ErrorCode.DOCUMENT_TOO_COMPLEX, _TOO_COMPLEX["memory"])
    except RecursionError:
        _fail(self.services.store, job_id, ErrorCode.DOCUMENT_TOO_COMPLEX, "the document is nested too deeply")
    except redis.RedisError as exc:
        log.warning("broker Redis unavailable (%s); job %s goes back to the queue", exc, job_id)
        raise self.retry(countdown=2, exc=exc) from None
    except Exception:
        log.exception("document job %s failed unexpectedly", job_id)
        _fail(self.services.store, job_id, ErrorCode.INTERNAL_ERROR, "the document stage could not process it")
    finally:
        current_job_id.reset(token)


def _fail(store: JobStore, job_id: str, code: ErrorCode, message: str) -> None:
    if store.fail(job_id, code, message) == Move.OK:
        log.warning("job %s failed: %s: %s", job_id, code.value, message, extra={"job_id": job_id})


_parent_store: JobStore | None = None


@task_failure.connect
def _killed(
    sender: Any = None, task_id: str = "", exception: BaseException | None = None, args: Any = None, **_: Any
) -> None:
    """In the parent: the pool process was killed by the hard time limit, or died (its memory, a crash)."""
    global _parent_store
    if getattr(sender, "name", "") != DOCUMENT_TASK or not args or not isinstance(args[0], str):
        return
    if not isinstance(exception, (TimeLimitExceeded, WorkerLostError)):
        return
    if _parent_store is None:
        _parent_store = JobStore(
            broker_redis(settings), Keys(settings.key_prefix), settings.job_ttl, settings.result_ttl
        )
    why = "time" if isinstance(exception, TimeLimitExceeded) else "lost"
    _fail(_parent_store, args[0], ErrorCode.DOCUMENT_TOO_COMPLEX, _TOO_COMPLEX[why])


@worker_process_init.connect
def _limit_memory(**_: Any) -> None:
    """The pool process's address space: what it holds now, ready to work, plus TRANSQ_DOCUMENT_MEMORY_MB."""
    configure_logging(settings.log_format, settings.log_level)
    _ = DocumentTask().services  # connections and imports before the baseline is measured
    baseline = psutil.Process(os.getpid()).memory_info().vms
    limit = baseline + settings.document_memory_mb * 2**20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    log.info(
        "document stage process %d ready: address space limited to %d MiB (%d MiB in use), %ds per document",
        os.getpid(),
        limit // 2**20,
        baseline // 2**20,
        settings.document_time_limit,
    )

"""The document stage: `celery -A worker.documents.stage worker --concurrency 1` (the `document` service).

Parsing an uploaded document and rendering its translation run here, never in the API's request workers:
one task at a time, in a pool process whose address space may grow by at most TRANSQ_DOCUMENT_MEMORY_MB
(a MemoryError past it) and which gets TRANSQ_DOCUMENT_TIME_LIMIT seconds per document (a soft limit,
then the process is killed 10 s later). A document that needs more fails `document_too_complex`; one
whose process dies fails the same way and is never delivered again (it would kill the next process too),
and the pool process is replaced, so the stage keeps working. No model: it never imports torch.

The pool process holds a lease on the job it works on, and its writes for it are fenced
(worker.documents.stage_lease): when the whole stage dies (its host, its container, SIGKILL), the job's lease
lapses and a live stage sends it again within TRANSQ_DOCUMENT_LEASE_SECONDS or so, instead of waiting for
the broker's visibility timeout; after TRANSQ_MAX_DELIVERIES such losses it fails `worker_lost`.

Importing this module builds nothing: `create_stage()` makes the Celery app, and the module's `app` (what
`celery -A worker.documents.stage` reads) is made by it from the environment's settings when first read.
"""

from __future__ import annotations

import logging
import os
import resource
from typing import Any

import psutil
import redis
from billiard.exceptions import WorkerLostError
from celery import Celery, Task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from celery.signals import task_failure, worker_process_init

from shared.broker_transport import use_transq_transport
from shared.celery_factory import DOCUMENT_TASK, make_celery
from shared.errors import ApiError, ErrorCode
from shared.logging_setup import configure_logging, current_job_id
from shared.settings import Settings
from shared.store.backends import Services
from shared.store.job_record import is_job_id
from shared.store.job_status import JobStatus, Move
from shared.store.jobs import JobStore
from shared.store.keys import Keys
from shared.store.redis_client import broker_redis
from shared.store.stage_leases import StageLeases
from worker.documents.stage_hooks import run_stage_hooks
from worker.documents.stage_lease import StageLease, parent_prefix
from worker.documents.stage_work import run_document_job

log = logging.getLogger(__name__)


class DocumentStage:
    """One stage's state: its settings, its pool process's services and lease (made there, on first use) and
    its parent's stores (made there, the first time a pool process dies)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.app: Celery | None = None  # the stage's own app: the producer its jobs are queued with
        self._services: Services | None = None
        self._lease: StageLease | None = None
        self._parent: tuple[JobStore, StageLeases] | None = None

    @property
    def services(self) -> Services:
        if self._services is None:
            self._services = Services.start(self.settings, celery=self.app)
        return self._services

    @property
    def lease(self) -> StageLease:
        """This pool process's lease on the job it works on; its thread renews it and sweeps lapsed ones."""
        if self._lease is None:
            services = self.services
            self._lease = StageLease(self.settings, StageLeases(services.redis, services.keys), services.stats)
            self._lease.start()
        return self._lease

    def too_complex(self, why: str) -> str:
        limits = {
            "time": f"took longer than {self.settings.document_time_limit}s to process (TRANSQ_DOCUMENT_TIME_LIMIT)",
            "memory": f"needed more than {self.settings.document_memory_mb} MiB to process (TRANSQ_DOCUMENT_MEMORY_MB)",
        }
        if why in limits:
            return f"the document {limits[why]}: it is too complex"
        return "processing the document killed its process: it is too complex"

    def run(self, task: Task, job_id: Any) -> None:
        """Take the job (a lease and a fence: worker.documents.stage_lease), then parse its document (and queue
        it for translation) or render its translation."""
        if not is_job_id(job_id):
            log.error("ignoring a message with a malformed job id: %r", job_id)
            return
        token = current_job_id.set(job_id)
        try:
            fence = self._take(task, job_id)
            if fence is not None:
                self._work(task, job_id, fence)
        finally:
            current_job_id.reset(token)

    def _take(self, task: Task, job_id: str) -> int | None:
        """This process's take of the job (its fence); None when the job is not this process's to work on."""
        try:
            taken = self.lease.take(job_id)
        except redis.RedisError as exc:
            self.lease.saw_trouble()
            log.warning("broker Redis unavailable (%s); job %s goes back to the queue", exc, job_id)
            raise task.retry(countdown=2, exc=exc) from None
        if taken.outcome == "lost":
            times = taken.attempts - 1
            lost = f"the document stage was lost {times} times while processing this document (TRANSQ_MAX_DELIVERIES)"
            fail(self.services.store, job_id, ErrorCode.WORKER_LOST, lost, taken.fence)
            return None
        if taken.outcome != "taken":
            log.info("job %s: not taken (%s)", job_id, taken.outcome)
            return None
        if taken.attempts > 1:
            log.warning("job %s: taken over from a lost document stage (delivery %d)", job_id, taken.attempts)
        return taken.fence

    def _work(self, task: Task, job_id: str, fence: int) -> None:
        store, retried = self.services.store, False
        try:
            if self.settings.test_hooks:
                run_stage_hooks(self.services, job_id)
            run_document_job(self.services, job_id, fence)
        except ApiError as exc:
            fail(store, job_id, exc.code, exc.message, fence)
        except SoftTimeLimitExceeded:
            fail(store, job_id, ErrorCode.DOCUMENT_TOO_COMPLEX, self.too_complex("time"), fence)
        except MemoryError:
            fail(store, job_id, ErrorCode.DOCUMENT_TOO_COMPLEX, self.too_complex("memory"), fence)
        except RecursionError:
            fail(store, job_id, ErrorCode.DOCUMENT_TOO_COMPLEX, "the document is nested too deeply", fence)
        except redis.RedisError as exc:
            retried = True
            self.lease.saw_trouble()
            log.warning("broker Redis unavailable (%s); job %s goes back to the queue", exc, job_id)
            raise task.retry(countdown=2, exc=exc) from None
        except Exception:
            log.exception("document job %s failed unexpectedly", job_id)
            fail(store, job_id, ErrorCode.INTERNAL_ERROR, "the document stage could not process it", fence)
        finally:
            self.lease.release(job_id, fence, counted=not retried)

    def killed(self, sender: Any = None, exception: BaseException | None = None, args: Any = None, **_: Any) -> None:
        """In the parent: the pool process was killed by the hard time limit, or died (its memory, a crash). Its
        job fails, unless another stage has taken it over since (its lease lapsed meanwhile)."""
        if getattr(sender, "name", "") != DOCUMENT_TASK or not args or not is_job_id(args[0]):
            return
        if not isinstance(exception, (TimeLimitExceeded, WorkerLostError)):
            return
        if self._parent is None:
            settings = self.settings
            client, keys = broker_redis(settings), Keys(settings.key_prefix)
            self._parent = JobStore(client, keys, settings.job_ttl, settings.result_ttl), StageLeases(client, keys)
        store, leases = self._parent
        holder, fence, status = leases.holder(args[0])
        if status not in (JobStatus.PARSING, JobStatus.RENDERING):
            return
        if holder and not holder.startswith(parent_prefix()):
            log.warning("job %s: its process died after another document stage took it over", args[0])
            return
        why = "time" if isinstance(exception, TimeLimitExceeded) else "lost"
        fail(store, args[0], ErrorCode.DOCUMENT_TOO_COMPLEX, self.too_complex(why), fence if holder else None)

    def limit_memory(self, **_: Any) -> None:
        """The pool process's address space: what it holds now, ready to work, plus TRANSQ_DOCUMENT_MEMORY_MB."""
        settings = self.settings
        configure_logging(settings.log_format, settings.log_level)
        _ = self.lease  # connections, imports and the lease's thread before the baseline is measured
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


def fail(store: JobStore, job_id: str, code: ErrorCode, message: str, fence: int | None = None) -> None:
    """Fail the job, unless another stage took it since `fence` (this process's take; None: any)."""
    if store.fail(job_id, code, message, fence) == Move.OK:
        log.warning("job %s failed: %s: %s", job_id, code.value, message, extra={"job_id": job_id})


def create_stage(settings: Settings | None = None) -> Celery:
    """The document stage's Celery app (for `settings`, by default the environment's): its task on the
    documents queue, the parent's handler of killed pool processes, each pool process's memory limit."""
    settings = settings or Settings.from_env()
    configure_logging(settings.log_format, settings.log_level)
    stage = DocumentStage(settings)
    app = stage.app = make_celery(settings, name="transq-documents")
    use_transq_transport(app, settings)  # a full broker or a failover: reconnect
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

    @app.task(bind=True, name=DOCUMENT_TASK, max_retries=None, shared=False)
    def document_job(task: Task, job_id: Any) -> None:
        stage.run(task, job_id)

    task_failure.connect(stage.killed, weak=False)
    worker_process_init.connect(stage.limit_memory, weak=False)
    return app


def __getattr__(name: str) -> Any:
    """`app`, made on first read (by `celery -A worker.documents.stage`), then kept."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    app = globals()["app"] = create_stage()
    return app

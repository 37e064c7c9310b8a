"""The worker's Celery app: `celery -A worker.scheduling.celery_app worker --concurrency 1`."""

from __future__ import annotations

import logging
import os
import signal
import threading
from pathlib import Path
from typing import Any

import psutil
import redis
from celery import Task
from celery.exceptions import TimeLimitExceeded
from celery.signals import worker_init, worker_process_init, worker_process_shutdown

from shared.celery_factory import TRANSLATE_TASK, make_celery
from shared.error_codes import ErrorCode
from shared.jobs import is_job_id
from shared.logging_setup import configure_logging, current_job_id
from shared.memory import probe_memory
from shared.redis_client import describe_broker, describe_cache
from shared.settings import Settings
from worker.scheduling import drain
from worker.scheduling.container import host_and_container
from worker.scheduling.context import WorkerContext
from worker.scheduling.job_work import fail
from worker.scheduling.rounds import run_round

log = logging.getLogger(__name__)
settings = Settings.from_env()
configure_logging(settings.log_format, settings.log_level)
app = make_celery(settings, name="transq-worker")
if settings.redis_sentinels:
    app.conf.broker_transport = "worker.scheduling.broker_transport:SentinelTransport"
elif settings.redis_url.startswith(("redis://", "rediss://")):
    app.conf.broker_transport = "worker.scheduling.broker_transport:Transport"  # a full broker: reconnect, not exit


def _max_memory_per_child_kib(settings: Settings) -> int:
    """Above the model's resident size: its weight files plus 1 GiB, unless set explicitly."""
    if settings.max_memory_per_child_mb:
        return settings.max_memory_per_child_mb * 1024
    folder = Path(settings.model)
    weights = sum(p.stat().st_size for p in folder.glob("*") if p.is_file()) if folder.is_dir() else 600 * 2**20
    return (weights + 2**30) // 1024


app.conf.worker_max_memory_per_child = _max_memory_per_child_kib(settings)


class TranslateTask(Task):
    """Holds the per-process worker context; the model in it is loaded once per process."""

    _context: WorkerContext | None = None

    @property
    def context(self) -> WorkerContext:
        if TranslateTask._context is None:
            TranslateTask._context = WorkerContext(settings)
        return TranslateTask._context

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        # Called in the parent when the hard time limit killed the pool process. The job is failed only while
        # that process's claim holds (with its fence): not when another worker took the job over meanwhile
        # (this one was stopped or cut off past its lease).
        if isinstance(exc, TimeLimitExceeded) and args and isinstance(args[0], str):
            _store_timeout(self.context, args[0])


def _store_timeout(context: WorkerContext, job_id: str) -> None:
    """Fail a job whose task was killed at the hard time limit. This runs in Celery's callback and must not
    raise (Celery would then neither acknowledge the message nor free the consumer's slot: the worker would
    never consume again): in a broker outage (a full broker may be what held the task past its limit) the
    failure is stored from a background thread once the broker takes writes again."""

    def store() -> None:
        holder, fence = context.store.holder(job_id)
        if _killed_here(holder):
            context.store.fail(job_id, ErrorCode.TIMEOUT, f"the job ran longer than {settings.task_time_limit}s", fence)

    try:
        store()
    except redis.RedisError as exc:
        log.warning("could not store job %s's timeout now (%s): retrying in the background", job_id, exc)

        def retry() -> None:
            try:
                context.broker.retry(store, grace_seconds=settings.job_ttl)
            except redis.RedisError:
                log.exception("could not store job %s's timeout", job_id)

        threading.Thread(target=retry, name="store-timeout", daemon=True).start()


def _killed_here(worker_id: str) -> bool:
    """Whether a worker id (host:pid:suffix, see WorkerContext) names a process of this host that is gone."""
    parts = worker_id.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != host_and_container() or not parts[1].isdigit():
        return False
    try:
        return psutil.Process(int(parts[1])).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@app.task(bind=True, base=TranslateTask, name=TRANSLATE_TASK, max_retries=None)
def translate_job(self: TranslateTask, job_id: Any) -> None:
    """Translate a job (and any waiting jobs that fit in the same batches)."""
    if not is_job_id(job_id):
        log.error("ignoring a message with a malformed job id: %r", job_id)
        return
    token = current_job_id.set(job_id)
    try:
        with self.context.round_running():
            result = run_round(self.context, job_id)
    except redis.RedisError as exc:
        # The broker went away outside a store call that waits it out: try the job again later.
        log.warning("broker Redis unavailable (%s); job %s goes back to the queue", exc, job_id)
        raise self.retry(countdown=2, exc=exc) from None
    except Exception:
        log.exception("job %s failed unexpectedly", job_id)
        if job_id in self.context.fences:  # only a job this process claimed (and still holds: its fence)
            fail(self.context, job_id, ErrorCode.INTERNAL_ERROR, "the worker could not translate this job")
        return
    finally:
        current_job_id.reset(token)
    if result.retry_after:
        # Another worker holds the job's lease; look again when it would have expired.
        raise self.retry(countdown=result.retry_after)


@worker_init.connect
def _log_start(**_: Any) -> None:
    # The parent process never imports torch or transformers: only the pool process, which holds the
    # model, pays for them (about 115 MiB of the parent's own memory per container otherwise). A pool
    # process that replaces a recycled one imports them again (a few seconds, once per recycling).
    memory = probe_memory(settings.cgroup_root)
    log.info(
        "transq worker: broker %s, cache %s, model %s; memory limit %.0f MiB (%s); max memory per child %d MiB",
        describe_broker(settings),
        describe_cache(settings),
        settings.model,
        memory.limit_bytes / 2**20,
        memory.source,
        app.conf.worker_max_memory_per_child // 1024,
    )


@worker_process_init.connect
def _load_model(**_: Any) -> None:
    """Load the model in each pool process before it takes work, then report ready."""
    drain.install_in_pool_process()
    configure_logging(settings.log_format, settings.log_level)
    context = TranslateTask().context
    try:
        context.load_model()
    except Exception:
        # A worker without its model is useless: stop the whole worker so its supervisor sees it.
        log.critical("cannot load model %s; stopping the worker", settings.model, exc_info=True)
        os.kill(os.getppid(), signal.SIGTERM)
        raise
    context.start_heartbeat()


@worker_process_shutdown.connect
def _leave(**_: Any) -> None:
    if TranslateTask._context is not None:
        TranslateTask._context.stop_heartbeat()

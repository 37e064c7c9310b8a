"""The worker's Celery app, built by `create_app(settings)`; importing this module makes nothing (no app, no
client, no settings). `celery -A worker.translation.celery_main worker --concurrency 1` builds it from the
environment (worker.translation.celery_main), as Flask's `examples/celery` does."""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path
from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_process_init, worker_process_shutdown

from shared.broker_transport import use_transq_transport
from shared.celery_factory import TRANSLATE_TASK, make_celery
from shared.logging_setup import configure_logging
from shared.memory import probe_memory
from shared.settings import Settings
from shared.store.redis_client import describe_broker, describe_cache
from worker.translation import drain
from worker.translation.process_parts import PerProcess
from worker.translation.translate_task import TranslateTask, translate_job

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None) -> Celery:
    """The worker's app for `settings` (by default from the environment), with its task and the handlers of
    its process signals."""
    settings = settings or Settings.from_env()
    configure_logging(settings.log_format, settings.log_level)
    app = make_celery(settings, name="transq-worker")
    use_transq_transport(app, settings)  # a full broker or a failover: reconnect
    app.conf.worker_max_memory_per_child = max_memory_per_child_kib(settings)
    process = PerProcess(settings)
    app.task(bind=True, base=TranslateTask, name=TRANSLATE_TASK, max_retries=None, shared=False, process=process)(
        translate_job
    )
    _connect_process_signals(app, settings, process)
    drain.connect()
    return app


def max_memory_per_child_kib(settings: Settings) -> int:
    """Above the model's resident size: its weight files plus 1 GiB, unless set explicitly."""
    if settings.max_memory_per_child_mb:
        return settings.max_memory_per_child_mb * 1024
    folder = Path(settings.model)
    weights = sum(p.stat().st_size for p in folder.glob("*") if p.is_file()) if folder.is_dir() else 600 * 2**20
    return (weights + 2**30) // 1024


def _connect_process_signals(app: Celery, settings: Settings, process: PerProcess) -> None:
    def log_start(**_: Any) -> None:
        # The main process never imports torch or transformers: only the pool process, which holds the model,
        # pays for them (about 115 MiB of the main process's own memory per container otherwise). A pool
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

    def load_model(**_: Any) -> None:
        """Load the model in each pool process before it takes work, then report ready."""
        drain.install_in_pool_process()
        configure_logging(settings.log_format, settings.log_level)
        parts = process.get()
        try:
            parts.load_model()
        except Exception:
            # A worker without its model is useless: stop the whole worker so its supervisor sees it.
            log.critical("cannot load model %s; stopping the worker", settings.model, exc_info=True)
            os.kill(os.getppid(), signal.SIGTERM)
            raise
        parts.start_heartbeat()

    def leave(**_: Any) -> None:
        if process.made is not None:
            process.made.stop_heartbeat()

    # Held strongly (the handlers are closures) and once per app.
    worker_init.connect(log_start, weak=False, dispatch_uid=f"transq-log-start-{id(app)}")
    worker_process_init.connect(load_model, weak=False, dispatch_uid=f"transq-load-model-{id(app)}")
    worker_process_shutdown.connect(leave, weak=False, dispatch_uid=f"transq-leave-{id(app)}")

"""Draining on SIGTERM (pod deletion, scale-in, a rolling update, `docker stop`): the running round stops at
its next batch boundary, parks its unfinished jobs with their translations so far (as the fair slice does),
its task returns and is acknowledged, and the worker exits, well within the grace period; another worker
resumes the jobs without counting a lost delivery.

Celery's warm shutdown (SIGTERM to the main process) stops consuming and waits for the running task, but
the pool process running it is not told. So the main process, when it starts shutting down, sends
DRAIN_SIGNAL to its pool processes, and each pool process's handler sets its draining flag, which the
round reads between batches (worker.translation.round.pass_ends). The main process ignores DRAIN_SIGNAL from
its start: a pool process inherits that, so one forked during the shutdown cannot be killed by the signal
before it has installed its handler.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from typing import Any

import psutil
from celery.signals import worker_init, worker_shutting_down

log = logging.getLogger(__name__)

DRAIN_SIGNAL = signal.SIGUSR2  # free in Celery's prefork pool (SIGUSR1 is the soft time limit)
draining = threading.Event()  # set in a pool process once its worker is shutting down


def _on_drain_signal(signum: int, frame: Any) -> None:
    draining.set()


def install_in_pool_process() -> None:
    """In a pool process, before it takes work: the drain signal sets the draining flag."""
    signal.signal(DRAIN_SIGNAL, _on_drain_signal)


def connect() -> None:
    """Connect the main process's handlers to Celery's signals (worker.translation.celery_app.create_app)."""
    worker_init.connect(_ignore_in_main_process, dispatch_uid="transq-drain-ignore")
    worker_shutting_down.connect(_tell_pool_processes, dispatch_uid="transq-drain-tell")


def _ignore_in_main_process(**_: Any) -> None:
    signal.signal(DRAIN_SIGNAL, signal.SIG_IGN)


def _tell_pool_processes(**_: Any) -> None:
    """In the main process, from Celery's SIGTERM/SIGINT/SIGQUIT handler: every pool process drains."""
    try:
        children = psutil.Process().children()
    except psutil.Error:
        return
    for child in children:
        try:
            os.kill(child.pid, DRAIN_SIGNAL)
        except ProcessLookupError:
            pass
    if children:
        log.info(
            "shutting down: pool process(es) %s park their jobs at the next batch boundary", [c.pid for c in children]
        )

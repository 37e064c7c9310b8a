"""A worker process's id (`host[/container]:pid:suffix`), and the file that tells the container health check
(worker.translation.liveness.healthcheck) which heartbeat is this container's (TRANSQ_WORKER_ID_FILE)."""

from __future__ import annotations

import logging
import os
import secrets

import psutil

from shared.settings import Settings
from worker.translation.liveness.container import host_and_container

log = logging.getLogger(__name__)


def new_worker_id() -> str:
    """Host and pid alone can repeat (containers on the host network share a hostname and may share pids):
    the container id and a random suffix tell them apart."""
    return f"{host_and_container()}:{os.getpid()}:{secrets.token_hex(3)}"


def is_dead_here(worker_id: str) -> bool:
    """Whether a worker id names a process of this host (and container) that is gone."""
    parts = worker_id.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != host_and_container() or not parts[1].isdigit():
        return False
    try:
        return psutil.Process(int(parts[1])).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def write_id_file(settings: Settings, worker_id: str) -> None:
    try:
        with open(settings.worker_id_file, "w") as handle:
            handle.write(worker_id)
    except OSError as exc:
        log.warning("cannot write %s: %s", settings.worker_id_file, exc)


def read_id_file(settings: Settings) -> str | None:
    """The id the worker of this container wrote, or None before its model is loaded."""
    try:
        with open(settings.worker_id_file) as handle:
            return handle.read().strip()
    except OSError:
        return None

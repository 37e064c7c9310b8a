"""Which process and container this is: a worker process's id (`host[/container]:pid:suffix`), the container's
id (which its Celery node name and worker ids carry), and the file that tells the container health check
(worker.translation.liveness.healthcheck) which heartbeat is this container's (TRANSQ_WORKER_ID_FILE)."""

from __future__ import annotations

import logging
import os
import re
import secrets
import socket
from pathlib import Path

import psutil

from shared.settings import Settings

log = logging.getLogger(__name__)

# Docker bind-mounts /etc/hostname, /etc/hosts and /etc/resolv.conf from /var/lib/docker/containers/<id>/.
_CONTAINER = re.compile(r"/containers/([0-9a-f]{64})/")


def container_id(mountinfo: str | None = None) -> str | None:
    """This container's short id (12 hex digits), or None outside a container."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return None
    found = _CONTAINER.search(mountinfo)
    return found.group(1)[:12] if found else None


def host_and_container() -> str:
    """The host name, and the container id where it is not the host name (host networking)."""
    host, container = socket.gethostname(), container_id()
    return f"{host}/{container}" if container and container != host else host


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

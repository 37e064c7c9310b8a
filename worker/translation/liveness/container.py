"""Which container this process runs in (its node name and worker id say so)."""

from __future__ import annotations

import re
import socket
from pathlib import Path

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

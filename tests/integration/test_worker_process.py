"""The real Celery worker: its parent process holds no model stack (only the pool process maps torch)."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def maps_torch(pid: int) -> bool:
    return "libtorch" in Path(f"/proc/{pid}/maps").read_text()


def test_only_the_pool_process_loads_torch(stack):
    worker = stack.workers[0]
    (child,) = worker.child_pids()
    assert maps_torch(child)
    assert not maps_torch(worker.process.pid)

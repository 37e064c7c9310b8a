"""Workers whose clocks are 30 s ahead and 30 s behind are all counted live, all the time: beats are scored and
judged by the broker's clock (Redis TIME), never a worker's own (libfaketime skews the workers' clocks)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from devstack.processes import WorkerProcess
from shared.store.backends import Backends

pytestmark = pytest.mark.slow

_LIBFAKETIME = [
    Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
    Path("/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"),
    Path("/usr/lib/faketime/libfaketime.so.1"),
    Path("/usr/local/lib/faketime/libfaketime.so.1"),
]


def _libfaketime() -> Path:
    found = next((p for p in _LIBFAKETIME if p.exists()), None)
    if found is None:
        pytest.skip("skewed clocks need libfaketime (Debian: apt-get install faketime; .ci/run installs it)")
    return found


def _skewed(library: Path, offset: str) -> list[str]:
    """A launcher running a process with its wall clock moved by `offset` (`+30s`), its children too."""
    return ["env", f"LD_PRELOAD={library}", f"FAKETIME={offset}", "FAKETIME_DONT_FAKE_MONOTONIC=1"]


def _clock_of(launcher: list[str]) -> float:
    """time.time() in a process started with `launcher`."""
    done = subprocess.run([*launcher, sys.executable, "-c", "import time; print(time.time())"], capture_output=True)
    return float(done.stdout)


def test_workers_30_s_ahead_and_behind_are_counted_at_every_look(make_stack, tmp_path: Path):
    library = _libfaketime()
    assert _clock_of(_skewed(library, "+30s")) - time.time() > 25  # the skew is real where the workers run
    s = make_stack(worker=False)
    workers = [
        WorkerProcess(s.settings, tmp_path / f"{name}.log", name=name, launcher=launcher)
        for name, launcher in (
            ("ahead", _skewed(library, "+30s")),
            ("behind", _skewed(library, "-30s")),
            ("on-time", []),
        )
    ]
    s.workers.extend(workers)  # stopped with the stack
    for worker in workers:
        worker.start(wait_ready=False)
    for worker in workers:
        worker.wait_ready(timeout=180)  # the one behind was never counted when beats carried its own clock
    registry = Backends.connect(s.settings).registry  # what /readyz/workers and routing read, uncached
    seen = []
    for _ in range(20):  # a look every quarter of a heartbeat, over five heartbeats
        seen.append(sorted(w["pid"] for w in registry.live_workers()))
        time.sleep(s.settings.heartbeat_seconds / 4)
    pool = sorted(pid for worker in workers for pid in worker.child_pids())
    assert seen == [pool] * len(seen)  # the one ahead used to evict the others at every beat
    assert s.client.languages()[0]["workers"] == 3

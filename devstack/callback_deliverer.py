"""The callback deliverer as production runs it (`python -m worker.callbacks`), for the tests and `transq dev`."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from devstack.processes import _env, _spawn
from devstack.redis_server import stop_process
from shared.settings import Settings


class CallbackDelivererProcess:
    def __init__(self, settings: Settings, log_path: Path, extra_env: dict[str, str] | None = None):
        self.settings = settings
        self.log_path = log_path
        self.extra_env = extra_env or {}  # SSL_CERT_FILE: a test CA its HTTPS requests trust
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30) -> CallbackDelivererProcess:
        self.process = _spawn(
            [sys.executable, "-m", "worker.callbacks"], {**_env(self.settings), **self.extra_env}, self.log_path
        )
        deadline = time.monotonic() + timeout
        while "callback deliverer ready" not in self.log_tail(100_000):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the callback deliverer did not start: {self.log_tail()}")
            time.sleep(0.05)
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        stop_process(self.process, timeout=30, sig=signal.SIGTERM)

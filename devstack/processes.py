"""Real service processes, as production runs them: a Celery worker and gunicorn serving the API.

Used by `transq dev`, the tests and the benchmarks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import requests

from devstack.redis_server import free_port, stop_process
from shared.settings import Settings
from shared.store.keys import Keys
from shared.store.redis_client import broker_redis

ROOT = Path(__file__).resolve().parents[1]


def _spawn(args: list[str], env: dict[str, str], log_path: Path | None) -> subprocess.Popen[bytes]:
    """Start a service process in its own session (a terminal's Ctrl-C reaches only its owner), from the
    checkout its PYTHONPATH names (this one, unless a caller runs another: `python -m` looks there first)."""
    log = open(log_path, "ab") if log_path else None
    cwd = env.get("PYTHONPATH", str(ROOT))
    return subprocess.Popen(
        args, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT if log else None, start_new_session=True
    )


def _env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSQ_")}
    env.update(settings.as_env())
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONUNBUFFERED"] = "1"
    env["TOKENIZERS_PARALLELISM"] = "false"
    return env


class WorkerProcess:
    """`celery -A worker.translation.celery_main worker --concurrency 1`, as production runs it."""

    celery_app = "worker.translation.celery_main"  # what `celery -A` loads

    def __init__(
        self,
        settings: Settings,
        log_path: Path | None = None,
        name: str = "w1",
        preload: str = "",
        container_command: bool = False,
        quiet: bool = False,
        launcher: list[str] | None = None,
    ):
        self.settings = settings
        self.launcher = launcher or []  # a prefix that runs it on another host (devstack.hosts)
        self.log_path = log_path
        self.name = name
        self.preload = preload  # modules the parent imports before Celery starts (bench.memory's baseline)
        self.container_command = container_command  # run the image's command (worker.translation.launch) instead
        self.quiet = quiet  # a console's worker (transq dev): no Celery banner, no warning about running as root
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, wait_ready: bool = True, timeout: float = 90) -> WorkerProcess:
        env = _env(self.settings)
        if self.quiet:  # a developer's own machine, often as root: not the containers' case (user transq)
            env["PYTHONWARNINGS"] = "ignore:You're running the worker with superuser privileges"
        self.process = _spawn([*self.launcher, *self._command()], env, self.log_path)
        if wait_ready:
            self.wait_ready(timeout)
        return self

    def _command(self) -> list[str]:
        if self.container_command:
            return [sys.executable, "-m", "worker.translation"]  # it leaves out gossip and mingle itself
        launcher = ["-m", "celery"]
        if self.preload:
            launcher = [
                "-c",
                f"import sys, {self.preload}; from celery.__main__ import main; sys.argv[0] = 'celery'; main()",
            ]
        return [
            sys.executable,
            *launcher,
            "-A",
            self.celery_app,
            *(["--quiet"] if self.quiet else []),
            "worker",
            "--concurrency",
            "1",
            "--loglevel",
            "INFO",
            "-n",
            f"{self.name}@%h",
            "--without-gossip",
            "--without-mingle",
        ]

    def ready_workers(self) -> list[dict[str, Any]]:
        client = broker_redis(self.settings)
        keys = Keys(self.settings.key_prefix)
        seconds, microseconds = client.time()  # beats are scored by the broker's clock
        now = seconds + microseconds / 1e6
        ids = client.zrangebyscore(keys.workers, now - self.settings.worker_silence_seconds, "+inf")
        infos = [client.get(keys.worker(i)) for i in ids]
        return [json.loads(i) for i in infos if i]

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"worker exited with {self.process.returncode}: {self.log_tail()}")
            if self.is_ready():
                return
            time.sleep(0.1)
        raise TimeoutError(f"worker not ready: {self.log_tail()}")

    def is_ready(self) -> bool:
        """Whether a pool process of this worker has reported its model loaded."""
        return any(w.get("pid") in self.child_pids() for w in self.ready_workers())

    def child_pids(self) -> list[int]:
        """Pool processes of this worker, read from the parent's children (not by name)."""
        if self.process is None or self.process.poll() is not None:
            return []
        try:
            return [c.pid for c in psutil.Process(self.process.pid).children()]
        except psutil.NoSuchProcess:
            return []

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:] if self.log_path else ""
        except OSError:
            return ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()

    def kill_all(self) -> None:
        """SIGKILL the parent and its pool processes."""
        if self.process is None:
            return
        self._signal_all(signal.SIGKILL)
        self.process.wait(timeout=10)

    def pause(self) -> None:
        """SIGSTOP the parent and its pool processes: to the others the worker is gone, as if cut off by a
        partition, while it still believes it holds its jobs; `resume` heals it."""
        self._signal_all(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal_all(signal.SIGCONT)

    def _signal_all(self, sig: int) -> None:
        for pid in self.child_pids() + ([self.process.pid] if self.process else []):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def holds(self, worker_id: str) -> bool:
        """Whether a worker id (a job record's `worker`: host:pid:suffix) is one of this worker's pool processes."""
        parts = worker_id.split(":")
        return len(parts) >= 3 and parts[-2].isdigit() and int(parts[-2]) in self.child_pids()


class DocumentStageProcess(WorkerProcess):
    """`celery -A worker.documents.stage worker --concurrency 1`: parses and renders documents (no model)."""

    celery_app = "worker.documents.stage"

    def is_ready(self) -> bool:
        """Whether its pool process is ready: it has set its own address-space limit (whatever the log level)."""
        try:
            inherited = psutil.Process(self.process.pid).rlimit(psutil.RLIMIT_AS) if self.process else None
            return any(psutil.Process(pid).rlimit(psutil.RLIMIT_AS) != inherited for pid in self.child_pids())
        except psutil.Error:  # a process gone meanwhile: not ready yet
            return False


class ApiProcess:
    """`gunicorn "api:create_app()"` on a free loopback port."""

    def __init__(
        self,
        settings: Settings,
        log_path: Path | None = None,
        port: int | None = None,
        app: str = "api:create_app()",
        extra_env: dict[str, str] | None = None,
        host: str = "127.0.0.1",
        launcher: list[str] | None = None,
    ):
        """`host`: the address it listens on; `launcher`: a prefix that runs it on another host."""
        self.settings = settings
        self.launcher = launcher or []
        self.app = app
        self.extra_env = extra_env or {}
        self.log_path = log_path
        self.port = port or free_port()
        self.host = host
        self.url = f"http://{host}:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, workers: int = 2, threads: int = 4, worker_class: str | None = None) -> ApiProcess:
        """gunicorn with the API's own settings (api/gunicorn_config.py: the gevent worker); another
        `worker_class` (benchmarks compare them) uses `threads` threads per process."""
        args = [*self.launcher, sys.executable, "-m", "gunicorn", "-c", "python:api.gunicorn_config"]
        args += ["--bind", f"{self.host}:{self.port}", "--workers", str(workers)]
        if worker_class:
            args += ["--worker-class", worker_class, "--threads", str(threads)]
        args.append(self.app)
        self.process = _spawn(args, {**_env(self.settings), **self.extra_env}, self.log_path)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:  # gunicorn gave up (a port in use, a bad setting): say so now
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}: {self._log_tail()}")
            try:
                if requests.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                time.sleep(0.1)
        raise TimeoutError(f"API did not start on port {self.port}: {self._log_tail()}")

    def _log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-2000:] if self.log_path else ""

    def stop(self) -> None:
        # gunicorn's quick shutdown: a graceful one waits for idle keep-alive connections (up to the read
        # timeout), and the API holds nothing worth draining (every accepted job is in Redis).
        stop_process(self.process, timeout=15, sig=signal.SIGINT)

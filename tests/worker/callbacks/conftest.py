"""A real receiver on 127.0.0.1 (http.server in a thread), a private Redis, the real job store, and the real
deliverer process (`python -m worker.callbacks`)."""

from __future__ import annotations

import re
import ssl
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator

import pytest

from devstack.callback_deliverer import CallbackDelivererProcess
from devstack.certificates import make_tls_files
from shared.settings import Settings
from shared.store.job_claims import Claimant, JobClaims
from shared.store.job_record import Job, new_job_id, utc_now
from shared.store.jobs import JobStore, Translation
from shared.store.keys import Keys
from tests.stack import ROOT

SECRET = "test-callback-secret-0123456789"
ROUTE = "route-1"


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    path: str
    at: float = field(default_factory=time.monotonic)


@dataclass
class Receiver:
    """Answers each POST with the next of `plan` (an HTTP status; 'timeout': too late; 'hang': holds the
    request until `release` is set), then 200; records every request as it arrives."""

    url: str
    plan: list[int | str] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, timeout: float = 30) -> list[Received]:
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.received) >= count, timeout):
                raise TimeoutError(f"{len(self.received)} callbacks arrived, not {count}")
            return list(self.received)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from _serve(None)


@pytest.fixture
def make_receiver() -> Iterator[Callable[..., Receiver]]:
    """More receivers: make_receiver(host="127.0.0.1")."""
    with ExitStack() as stack:
        yield lambda host="127.0.0.1": stack.enter_context(contextmanager(_serve)(None, host))


def _serve(tls: ssl.SSLContext | None, host: str = "127.0.0.1") -> Iterator[Receiver]:
    """A receiver on `host`, a loopback address (over TLS with `tls`)."""
    state: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            me = state[0]
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with me.arrived:
                me.received.append(Received(dict(self.headers), body, self.path))
                me.arrived.notify_all()
                answer = me.plan.pop(0) if me.plan else 200
            if answer == "hang":
                me.release.wait(60)
                answer = 200
            elif answer == "timeout":  # answers after the deliverer's TRANSQ_CALLBACK_TIMEOUT (1 s) has passed
                time.sleep(2.5)
                answer = 200
            self.send_response(int(answer))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    scheme = "https" if tls else "http"
    state.append(Receiver(f"{scheme}://{host}:{server.server_address[1]}/hooks/transq?from=test"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state[0]
    state[0].release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[Receiver, str]]:
    """A receiver over TLS whose certificate (from a throw-away CA) names `localhost` only; and that CA's file."""
    files = make_tls_files(tmp_path / "tls", ["localhost"])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(files.cert, files.key)
    for found in _serve(context):
        yield found, files.ca


def where(url: str) -> str:
    """The `host:port` of a receiver's URL, as the allow lists name it."""
    return url.split("/")[2]


def callback_settings(redis_url: str, allow: str = "", **overrides: object) -> Settings:
    """The receivers `allow` names (`host:port`, comma-separated) allowed plain http and loopback (the
    test's setting), fast retries."""
    values: dict[str, object] = dict(
        redis_url=redis_url,
        callback_secret=SECRET,
        callback_allow_http_hosts=allow,
        callback_allow_private_hosts=allow,
        callback_timeout=1.0,
        callback_retry_seconds=0.2,
        callback_deadline=60,
    )
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def settings(redis_server, receiver: Receiver) -> Settings:  # type: ignore[no-untyped-def]
    """The test's receiver allowed."""
    return callback_settings(redis_server.url, where(receiver.url))


@pytest.fixture
def store(redis_client, settings: Settings) -> JobStore:  # type: ignore[no-untyped-def]
    return JobStore(redis_client, Keys(settings.key_prefix), settings.job_ttl, settings.result_ttl)


def queued_job(callback_url: str = "", status: str = "queued", owner: str = "") -> Job:
    return Job(
        id=new_job_id(),
        status=status,  # type: ignore[arg-type]
        texts=["你好。"],
        model="test-model",
        created_at=utc_now(),
        sentences_total=1,
        route=ROUTE,
        callback_url=callback_url,
        owner=owner,
    )


def claims_of(store: JobStore) -> JobClaims:
    """The workers' claims on the jobs of `store` (its client, keys and TTLs)."""
    return JobClaims(store.client, store.keys, store.job_ttl, store.result_ttl)


def finished_job(store: JobStore, callback_url: str, outcome: str = "succeed", owner: str = "") -> Job:
    """A job (of API key id `owner`) created and made final through the real store: claimed, then succeeded
    or failed."""
    job = queued_job(callback_url, owner=owner)
    store.create(job)
    claim = claims_of(store).claim(job.id, Claimant(ROUTE, "worker-1", 5, 3))
    if outcome == "succeed":
        assert store.translated(job, claim.fence, Translation(["Hello."], sentences_done=1)) == "ok"
    else:
        from shared.errors import ErrorCode

        assert store.fail(job.id, ErrorCode.TIMEOUT, "too slow", fence=claim.fence) == "ok"
    return job


def wait_until(check: Callable[[], object], timeout: float = 30, what: str = "") -> object:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what or check}")
        time.sleep(0.05)


@pytest.fixture
def start_deliverer(tmp_path: Path) -> Iterator[Callable[..., CallbackDelivererProcess]]:
    started: list[CallbackDelivererProcess] = []

    def start(settings: Settings, **extra_env: str) -> CallbackDelivererProcess:
        process = CallbackDelivererProcess(settings, tmp_path / f"deliverer-{len(started) + 1}.log", extra_env)
        started.append(process)
        return process.start()

    yield start
    for process in started:
        process.stop()


def documented_verify() -> Callable[..., bool]:
    """The receiver's check docs/api.md shows under Completion callbacks, run as a user would copy it."""
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = page[page.index("\n## Completion callbacks\n") :]
    (code,) = re.findall(r"```python\n(.*?)```", section[: section.index("\n## ", 10)], re.S)
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/api.md", "exec"), namespace)
    return namespace["verify"]  # type: ignore[return-value]

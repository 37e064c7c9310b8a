"""Requests sent slowly or with huge heads, from many connections at once, through gunicorn (the API's own
worker) and real Redis: each attacking connection is answered (408/431 in JSON) or closed within its bound,
an address over its connection limit is refused (429 in JSON), and /healthz and honest clients are served
within a second throughout (api.connection_guard)."""

from __future__ import annotations

import json
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
import requests

from devstack.redis_server import RedisServer
from tests.stack import ApiProcess, stack_settings

pytestmark = pytest.mark.slow

POOL = 150  # connections each API process takes at once (GUNICORN_CONNECTIONS); two processes
TRICKLE_HEAD = b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
TRICKLE_BODY = TRICKLE_HEAD + b"Content-Length: 900000\r\n\r\n{"
BIG_HEAD = (
    b"GET /v1/jobs/"
    + b"0" * 32
    + b" HTTP/1.1\r\nHost: x\r\n"
    + b"".join(b"X-Pad-%02d: %s\r\n" % (i, b"p" * 8000) for i in range(99))
    + b"\r\n"
)


@pytest.fixture
def api(tmp_path: Path, model_dir: Path):
    """Redis and the API only (no worker: the jobs stay queued), with small connection pools."""

    def start(**overrides: object) -> ApiProcess:
        redis = stack.enter(RedisServer().start())
        settings = stack_settings(redis.url, model_dir, **overrides)
        process = ApiProcess(settings, tmp_path / "api.log", extra_env={"GUNICORN_CONNECTIONS": str(POOL)})
        return stack.enter(process.start())

    stack = _Closing()
    yield start
    stack.close()


class _Closing:
    def __init__(self) -> None:
        self.things: list = []

    def enter(self, thing):  # type: ignore[no-untyped-def]
        self.things.append(thing)
        return thing

    def close(self) -> None:
        for thing in reversed(self.things):
            thing.stop()


@dataclass
class Connection:
    sock: socket.socket
    address: str
    opened: float
    unsent: bytes
    next_byte: float = 0.0
    received: bytes = b""
    outcome: str = ""  # the status answered ("408"), "closed", "reset" or, at the end, "open"
    ended: float = 0.0


@dataclass
class Attack:
    """Connections from `addresses` (loopback aliases, not the prober's 127.0.0.1), `per_address` open at
    once: each sends `opening` as fast as the server reads it, then one byte every `interval` seconds when
    `interval` is set; an answered or closed connection is opened again after `reopen` seconds."""

    port: int
    addresses: list[str]
    per_address: int
    opening: bytes
    interval: float | None = None
    reopen: float | None = None
    done: list[Connection] = field(default_factory=list)
    live: list[Connection] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Attack:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        now = time.monotonic()
        for conn in self.live:
            conn.outcome, conn.ended = conn.outcome or "open", now
            conn.sock.close()
        self.done += self.live
        self.live = []

    def _open(self, address: str) -> None:
        sock = socket.socket()
        sock.bind((address, 0))
        sock.settimeout(2)
        try:
            sock.connect(("127.0.0.1", self.port))
        except OSError:  # the listen backlog is full: not a connection the server took
            sock.close()
            self.done.append(Connection(socket.socket(), address, time.monotonic(), b"", outcome="unconnected"))
            return
        sock.setblocking(False)
        conn = Connection(sock, address, time.monotonic(), self.opening)
        conn.next_byte = conn.opened + (self.interval or 0)
        self.live.append(conn)
        self._selector.register(sock, selectors.EVENT_READ, conn)

    def _run(self) -> None:
        self._selector = selectors.DefaultSelector()
        waiting: list[tuple[float, str]] = []  # (when, address) of connections to open again
        for address in self.addresses:
            for _ in range(self.per_address):
                self._open(address)
        while not self._stop.is_set():
            for key, _ in self._selector.select(timeout=0.05):
                self._read(key.data)
            now = time.monotonic()
            for conn in list(self.live):
                if not conn.outcome:
                    self._send(conn, now)
                if conn.outcome:
                    conn.ended = conn.ended or now
                    self._selector.unregister(conn.sock)
                    conn.sock.close()
                    self.live.remove(conn)
                    self.done.append(conn)
                    if self.reopen is not None:
                        waiting.append((now + self.reopen, conn.address))
            for when, address in [w for w in waiting if w[0] <= now]:
                waiting.remove((when, address))
                self._open(address)
        self._selector.close()

    def _read(self, conn: Connection) -> None:
        try:
            data = conn.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = None
        if data:
            conn.received += data
            head, _, body = conn.received.partition(b"\r\n\r\n")
            length = [int(v) for k, v in _headers(head).items() if k == "content-length"]
            if length and len(body) >= length[0]:
                conn.outcome, conn.ended = status_of(conn.received), time.monotonic()
            return
        conn.outcome = status_of(conn.received) if conn.received else ("closed" if data == b"" else "reset")
        conn.ended = time.monotonic()

    def _send(self, conn: Connection, now: float) -> None:
        try:
            if conn.unsent:
                conn.unsent = conn.unsent[conn.sock.send(conn.unsent[:262144]) :]
            elif self.interval and now >= conn.next_byte:
                conn.sock.send(b" ")
                conn.next_byte += self.interval
        except BlockingIOError:
            pass
        except OSError:
            conn.outcome = status_of(conn.received) if conn.received else "reset"


def _headers(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")
    return dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)


def status_of(received: bytes) -> str:
    return received.split(b" ", 2)[1].decode() if received.startswith(b"HTTP/1.1 ") else "garbled"


def error_code(received: bytes) -> str:
    return json.loads(received.partition(b"\r\n\r\n")[2])["error"]["code"]


class Prober:
    """GET /healthz every 0.2 s from 127.0.0.1 (a new connection each time, `timeout` seconds to answer);
    each sample's latency, or the error that ended it."""

    def __init__(self, url: str, timeout: float = 1.0):
        self.url, self.timeout, self.samples = url, timeout, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                status = requests.get(self.url + "/healthz", timeout=self.timeout).status_code
                self.samples.append((time.monotonic() - started, status))
            except requests.RequestException as exc:
                self.samples.append((time.monotonic() - started, type(exc).__name__))
            self._stop.wait(0.2)

    def stop(self) -> list:
        self._stop.set()
        self._thread.join()
        return self.samples


def slow_honest_post(port: int, text: str, rate: float) -> tuple[int, bytes]:
    """POST /v1/jobs with a body sent at `rate` bytes per second (in 50-byte pieces), keep-alive."""
    body = json.dumps({"text": text}, ensure_ascii=False).encode()
    head = TRICKLE_HEAD + b"Content-Length: %d\r\n\r\n" % len(body)
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(head)
        for i in range(0, len(body), 50):
            time.sleep(50 / rate)
            sock.sendall(body[i : i + 50])
        received = b""
        while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    return int(status_of(received)), received


def status(call, *args, **kwargs) -> int | str:  # type: ignore[no-untyped-def]
    """A call's status code, or the name of the error that ended it."""
    try:
        return call(*args, **kwargs).status_code
    except requests.RequestException as exc:
        return type(exc).__name__


def worker_rss(api: ApiProcess) -> int:
    return sum(c.memory_info().rss for c in psutil.Process(api.process.pid).children())


def test_trickled_requests_are_cut_off_and_do_not_starve_the_api(api):
    """Headers or a body (Content-Length 900000) trickled a byte a second from four addresses, 100
    connections each, opened again as soon as they end; two API processes of 150 connections each."""
    limit = 30
    s = api(read_timeout=2.0, request_timeout=8.0, body_min_rate=64, connections_per_client=limit)
    addresses = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]
    bodies = Attack(s.port, addresses[:2], 100, TRICKLE_BODY, interval=1.0, reopen=0.5).start()
    heads = Attack(s.port, addresses[2:], 100, TRICKLE_HEAD, interval=1.0, reopen=0.5).start()
    prober = Prober(s.url)
    time.sleep(1.5)
    try:
        accepted = [status(requests.post, s.url + "/v1/jobs", json={"text": f"照常{i}。"}, timeout=3) for i in range(5)]
        try:
            slow_status, slow_answer = slow_honest_post(s.port, "慢慢来的请求。" * 20, rate=400)
        except OSError as exc:
            slow_status, slow_answer = 0, repr(exc).encode()
        with requests.Session() as session:  # keep-alive: one connection, several requests
            kept = [
                status(session.post, s.url + "/v1/jobs", json={"text": f"同一连接{i}。"}, timeout=3) for i in range(3)
            ]
        time.sleep(4)
    finally:
        bodies.stop()
        heads.stop()
        samples = prober.stop()
    late = [sample for sample in samples if sample[1] != 200 or sample[0] >= 1.0]
    assert len(samples) >= 20 and not late, f"/healthz late or failed in {len(late)} of {len(samples)}: {late[:5]}"
    assert accepted + kept == [202] * 8
    assert slow_status == 202, slow_answer
    for attack, cut_off in ((bodies, "408"), (heads, "408")):
        outcomes = {}
        for conn in attack.done:
            outcomes.setdefault(conn.outcome, []).append(conn)
        refused = outcomes.pop("429", [])
        assert refused, f"no connection over the limit was refused: { {k: len(v) for k, v in outcomes.items()} }"
        assert {error_code(c.received) for c in refused} == {"rate_limited"}
        # The first 100 of each address: at most `limit` per API process (two) were taken.
        first = sorted(attack.done, key=lambda c: c.opened)[: 100 * 2]
        assert sum(c.outcome == "429" for c in first) >= 2 * (100 - 2 * limit)
        slowest = max(c.ended - c.opened for conns in outcomes.values() for c in conns)
        assert set(outcomes) <= {cut_off, "closed", "reset", "open"} and slowest < 6.0, (
            {k: len(v) for k, v in outcomes.items()},
            slowest,
        )
        assert len(outcomes.get(cut_off, [])) >= 20
        assert {error_code(c.received) for c in outcomes[cut_off]} == {"request_timeout"}


def test_huge_heads_are_cut_off_at_the_header_byte_limit(api):
    """300 connections from three addresses each send 99 header fields of 8,000 bytes (within gunicorn's
    own limits: 100 fields of 8190 bytes), at once: /healthz stays within a second, memory stays flat."""
    s = api(connections_per_client=60, header_bytes=65536)
    base_rss = worker_rss(s)
    prober = Prober(s.url)
    time.sleep(0.5)
    attack = Attack(s.port, ["127.0.0.2", "127.0.0.3", "127.0.0.4"], 100, BIG_HEAD).start()
    try:
        time.sleep(1)
        accepted = status(requests.post, s.url + "/v1/jobs", json={"text": "照常。"}, timeout=3)
        big = {f"X-Honest-{i}": "h" * 1000 for i in range(40)}  # 40 kB of headers: within the limit
        honest = status(requests.get, s.url + "/healthz", headers=big, timeout=3)
        time.sleep(6)
    finally:
        attack.stop()
        samples = prober.stop()
    grown = worker_rss(s) - base_rss
    late = [sample for sample in samples if sample[1] != 200 or sample[0] >= 1.0]
    assert len(samples) >= 20 and not late, f"/healthz late or failed in {len(late)} of {len(samples)}: {late[:5]}"
    assert (accepted, honest) == (202, 200)
    outcomes = {}
    for conn in attack.done:
        outcomes.setdefault(conn.outcome, []).append(conn)
    slowest = max(c.ended - c.opened for c in attack.done)
    assert set(outcomes) <= {"431", "429", "closed", "reset", "open"} and slowest < 5.0, (
        {k: len(v) for k, v in outcomes.items()},
        slowest,
    )
    answered = outcomes.get("431", []) + outcomes.get("429", [])
    assert {error_code(c.received) for c in answered} <= {"headers_too_large", "rate_limited"}
    assert grown < 40 * 2**20, f"the API processes grew by {grown / 2**20:.0f} MiB"
    # A head just over the limit, sent whole, is answered 431 in JSON.
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 8000 + b"\r\n"
    over = head + b"".join(b"X-More-%d: %s\r\n" % (i, b"m" * 8000) for i in range(8)) + b"\r\n"
    assert len(over) > 65536
    with socket.create_connection(("127.0.0.1", s.port), timeout=10) as sock:
        sock.sendall(over[:65537])
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    assert status_of(received) == "431" and error_code(received) == "headers_too_large"

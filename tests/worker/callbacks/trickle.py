"""A hostile callback receiver: it reads each request whole, then answers the first `slow` of them one byte
every `every` seconds (each byte well inside any read timeout, so only a bound on the whole attempt cuts
it), the rest at once; it records when each connection came and when the deliverer closed it."""

from __future__ import annotations

import select
import socket
import threading
import time
from dataclasses import dataclass, field

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


@dataclass
class Connection:
    opened: float
    request: bytes = b""
    sent: int = 0  # bytes of the answer sent
    closed: float | None = None  # when the deliverer closed it before the whole answer was sent (cut)
    ended: float | None = None  # when it ended, cut or answered


@dataclass
class SlowReceiver:
    host: str
    every: float
    slow: int = 1
    answer: bytes = ANSWER
    connections: list[Connection] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = socket.create_server((self.host, 0))
        self._stopping = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self._server.getsockname()[1]}/slow"

    @property
    def where(self) -> str:
        return f"{self.host}:{self._server.getsockname()[1]}"

    def stop(self) -> None:
        self._stopping.set()
        self._server.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                seen = Connection(time.monotonic())
                trickle = len(self.connections) < self.slow
                self.connections.append(seen)
            threading.Thread(target=self._serve, args=(client, seen, trickle), daemon=True).start()

    def _serve(self, client: socket.socket, seen: Connection, trickle: bool) -> None:
        try:
            seen.request = _read_request(client)
            step = 1 if trickle else len(self.answer)
            for start in range(0, len(self.answer), step):
                if trickle and _closed_within(client, self.every):
                    seen.closed = time.monotonic()
                    return
                client.sendall(self.answer[start : start + step])
                seen.sent = start + step
            seen.sent = len(self.answer)
        except OSError:
            seen.closed = seen.closed or time.monotonic()
        finally:
            client.close()
            seen.ended = time.monotonic()


def most_at_once(connections: list[Connection], slack: float = 0.5) -> int:
    """The most of `connections` open at one time, each taken to end `slack` seconds before this receiver saw
    it end (its thread may wake late, after the deliverer opened the next one); one still open ends now."""
    now = time.monotonic()
    spans = [(c.opened, (c.ended or now) - slack) for c in connections]
    events = sorted(
        [(start, 1) for start, end in spans if end > start] + [(end, -1) for start, end in spans if end > start]
    )
    most = open_ = 0
    for _, change in events:
        open_ += change
        most = max(most, open_)
    return most


def _read_request(client: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    while len(body) < length:
        chunk = client.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def _closed_within(client: socket.socket, seconds: float) -> bool:
    """Wait `seconds`; whether the peer closed the connection meanwhile."""
    readable, _, _ = select.select([client], [], [], seconds)
    if not readable:
        return False
    try:
        return client.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True

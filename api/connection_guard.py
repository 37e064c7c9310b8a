"""Every read from an API client's connection within a deadline, whatever gunicorn's parser and readers do.

gunicorn reads a request's head until it holds all of it, re-scanning its buffer after every read (quadratic
in the head's size), and a body until it holds as much as the application asked for (64 KiB), so a check made
after a read returns comes too late for a client that sends a byte at a time. GuardedSocket (api.server wraps
each connection in it) bounds the reads themselves:

- the head (request line and headers): it must end within TRANSQ_READ_TIMEOUT of the connection's start or
  of the previous answer (the wait of an idle keep-alive connection included) and within TRANSQ_HEADER_BYTES.
  It is read and searched for its end here, once, and handed to gunicorn's parser only whole. Over the byte
  limit: 431; past the deadline with part of a request received: 408 (both in JSON, api.server); with nothing
  received: the connection closes.
- the body: after a grace of TRANSQ_READ_TIMEOUT from the end of the head it must keep up TRANSQ_BODY_MIN_RATE
  bytes per second on average (each byte received earns 1/rate seconds more, as Apache's mod_reqtimeout
  does), and the whole request must be received within TRANSQ_REQUEST_TIMEOUT of its first byte. A read past
  the deadline raises BodyTimeout, a TimeoutError: the application answers 408 (api.validation.read_body) and
  the connection closes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from gunicorn.http.errors import LimitRequestHeaders

from shared.settings import Settings

_HEAD_END = b"\r\n\r\n"


class HeadTimeout(Exception):
    """A request's head was not received within its deadline (answered 408 by api.server)."""


class BodyTimeout(TimeoutError):
    """A request's body was not received within its deadline (answered 408 by api.validation.read_body)."""


@dataclass(frozen=True)
class ReadLimits:
    head_timeout: float
    head_bytes: int
    request_timeout: float
    body_min_rate: float
    send_timeout: float
    drain_bytes: int  # most of a body the application left unread that is read to keep the connection

    @classmethod
    def of(cls, settings: Settings) -> ReadLimits:
        return cls(
            head_timeout=settings.read_timeout,
            head_bytes=settings.header_bytes,
            request_timeout=settings.request_timeout,
            body_min_rate=float(settings.body_min_rate),
            send_timeout=settings.read_timeout + 1,
            drain_bytes=max(settings.max_body_bytes, settings.max_document_bytes) + 65536,
        )


class GuardedSocket:
    """A client socket whose reads are bounded by the current request's deadline (see the module). gunicorn
    calls begin_body when it has parsed a head, and begin_head once it has answered (api.server)."""

    def __init__(self, sock: Any, limits: ReadLimits, clock: Any = time.monotonic):
        self._sock = sock
        self._limits = limits
        self._clock = clock
        self._req: Any = None
        self._head = bytearray()  # head bytes read and not yet handed on
        self.begin_head()

    def __getattr__(self, name: str) -> Any:  # everything but reads and writes is the socket's own
        return getattr(self._sock, name)

    # Phases

    def begin_head(self) -> None:
        """The next request's head is due: from now until the head deadline. Bytes read ahead with the
        previous request (a pipelining client's) are its first."""
        now = self._clock()
        self._in_body = False
        self._deadline = now + self._limits.head_timeout
        self._first_byte_at: float | None = now if self._head else None
        self._head_read = len(self._head)  # bytes read in this phase
        self._head_handed = 0  # of them, handed on to the parser
        self._head_whole = False  # _head holds a whole head (and maybe what follows it)
        if self._head:
            end = self._head.find(_HEAD_END)
            self._check_size(end + len(_HEAD_END) if end >= 0 else self._head_read)
            self._head_whole = end >= 0
        self._req = None

    def begin_body(self, req: Any) -> None:
        """gunicorn has parsed `req`'s head; its body (if any) is due from now on."""
        now = self._clock()
        self._in_body = True
        self._req = req
        self._body_started = now
        self._body_read = 0
        self._request_deadline = (self._first_byte_at or now) + self._limits.request_timeout

    def drain_body(self, req: Any) -> bool:
        """Read what the application left of `req`'s body (one the API would have taken at most, within the
        body's deadline) so the next request can be read, and the client, still sending, reads its answer
        (a 401, a 413) rather than a reset; False: the connection must close instead."""
        body = getattr(req, "body", None)
        if body is None:
            return True
        if getattr(body, "failed", False):
            return False
        drained = 0
        try:
            while data := body.read(65536):
                drained += len(data)
                if drained > self._limits.drain_bytes:
                    return False
        except Exception:  # noqa: BLE001 - a deadline, a broken chunk, a reset: the connection closes
            return False
        return True

    def _body_deadline(self) -> float:
        earned = self._body_read / self._limits.body_min_rate
        return min(self._request_deadline, self._body_started + self._limits.head_timeout + earned)

    # Reads

    def recv(self, size: int, *flags: int) -> bytes:
        if not self._in_body:
            return self._recv_head(size)
        if self._head:  # read ahead with the head
            return self._take(size)
        data = self._read(size, self._body_deadline())
        self._body_read += len(data)
        return data

    def _take(self, size: int) -> bytes:
        piece = bytes(self._head[:size])
        del self._head[:size]
        return piece

    def _recv_head(self, size: int) -> bytes:
        """The head is read whole (or until the limit) and searched for its end once, before the parser
        sees any of it: its quadratic re-scans then run over a few large pieces, not one per small read."""
        while not self._head_whole:
            data = self._read(max(size, 8192), self._deadline)
            if not data:
                break  # the client closed: the parser sees what there is
            searched_from = max(0, len(self._head) - 3)
            self._head += data
            self._head_read += len(data)
            self._first_byte_at = self._first_byte_at or self._clock()
            end = self._head.find(_HEAD_END, searched_from)
            if end >= 0:
                self._check_size(self._head_handed + end + len(_HEAD_END))
                self._head_whole = True
            else:
                self._check_size(self._head_read)
        piece = self._take(size)
        self._head_handed += len(piece)
        if not self._head:
            self._head_whole = False  # the parser wants more than the head read: read and search again
        return piece

    def _check_size(self, size: int) -> None:
        if size > self._limits.head_bytes:
            raise LimitRequestHeaders(f"request line and headers over {self._limits.head_bytes} bytes")

    def _read(self, size: int, deadline: float) -> bytes:
        remaining = deadline - self._clock()
        if remaining > 0:
            self._sock.settimeout(remaining)
            try:
                return self._sock.recv(size)
            except TimeoutError:
                pass
        return self._expired()

    def _expired(self) -> bytes:
        if self._in_body:
            if self._req is not None:
                self._req.force_close()  # the answer says Connection: close
            rate, whole = self._limits.body_min_rate, self._limits.request_timeout
            raise BodyTimeout(
                f"the request body was not sent in time (at least {rate:g} bytes/s after the first "
                f"{self._limits.head_timeout:g}s, all of the request within {whole:g}s)"
            )
        if not self._head_read:
            return b""  # an idle connection: closed without an answer, as at the end of a stream
        raise HeadTimeout(f"the request's headers were not sent within {self._limits.head_timeout:g}s")

    # Writes: each within the send timeout, whatever a read left the socket's timeout at

    def send(self, data: Any, *flags: int) -> int:
        self._sock.settimeout(self._limits.send_timeout)
        return self._sock.send(data, *flags)

    def sendall(self, data: Any, *flags: int) -> None:
        self._sock.settimeout(self._limits.send_timeout)
        self._sock.sendall(data, *flags)

    def sendfile(self, file: Any, offset: int = 0, count: int | None = None) -> int:
        self._sock.settimeout(self._limits.send_timeout)
        return self._sock.sendfile(file, offset, count)

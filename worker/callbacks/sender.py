"""One POST of a callback: to the addresses the policy checked (shared.callback_policy), no redirects, no
retries of its own (the outbox retries), and the whole attempt within one deadline (TRANSQ_CALLBACK_TIMEOUT
from its start): resolving the host, connecting, the TLS handshake, sending, and the receiver's status line
and headers. Every send and receive on the socket waits at most for the time left, so a receiver trickling
its answer a byte at a time is cut at the deadline, not at a read timeout that each byte renews. The
answer's body is not read."""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any

from shared.callback_policy import CallbackRefused, CallbackTarget, Resolver, resolve
from worker.callbacks.signing import ascii_only

OUT_OF_TIME = "the attempt ran out of time (TRANSQ_CALLBACK_TIMEOUT)"


@dataclass(frozen=True)
class Answer:
    """The receiver's HTTP status (None: none came), and what went wrong ('' when it answered 2xx)."""

    status: int | None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class _Bounded:
    """A socket whose every send and receive waits at most until `deadline` (time.monotonic())."""

    deadline = 0.0

    def _time_left(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(OUT_OF_TIME)
        self.settimeout(left)  # type: ignore[attr-defined]

    def recv_into(self, *args: Any, **kwargs: Any) -> Any:
        self._time_left()
        return super().recv_into(*args, **kwargs)  # type: ignore[misc]

    def recv(self, *args: Any, **kwargs: Any) -> Any:
        self._time_left()
        return super().recv(*args, **kwargs)  # type: ignore[misc]

    def send(self, *args: Any, **kwargs: Any) -> Any:
        self._time_left()
        return super().send(*args, **kwargs)  # type: ignore[misc]

    def sendall(self, *args: Any, **kwargs: Any) -> Any:
        self._time_left()  # a sendall with a timeout ends by it, however slowly the receiver reads
        return super().sendall(*args, **kwargs)  # type: ignore[misc]


class _Socket(_Bounded, socket.socket):
    pass


class _TLSSocket(_Bounded, ssl.SSLSocket):
    pass


def post(target: CallbackTarget, body: bytes, headers: dict[str, str], deadline: float) -> Answer:
    """POST `body` to the target, at its first checked address, the URL's host in Host and in TLS's SNI and
    certificate check; given up at `deadline` (time.monotonic())."""
    default_port = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else ascii_host(target.host)
    all_headers = {
        "Host": host if target.port == default_port else f"{host}:{target.port}",
        "Content-Type": "application/json",
        "User-Agent": "transq-callbacks",
        **headers,
    }
    connection = http.client.HTTPConnection(target.addresses[0], target.port)
    try:
        connection.sock = _connect(target, deadline)
        connection.request("POST", ascii_only(target.path), body=body, headers=all_headers)
        status = connection.getresponse().status
    except (OSError, http.client.HTTPException, ValueError) as exc:
        late = time.monotonic() >= deadline
        return Answer(None, f"TimeoutError: {OUT_OF_TIME}" if late else f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()  # the answer's body unread; its socket too
    if 200 <= status < 300:
        return Answer(status)
    return Answer(status, f"the receiver answered HTTP {status}")


def _connect(target: CallbackTarget, deadline: float) -> socket.socket:
    address = target.addresses[0]
    sock: socket.socket = _Socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.deadline = deadline  # type: ignore[attr-defined]
        sock._time_left()  # type: ignore[attr-defined]
        sock.connect((address, target.port))
        if target.scheme == "https":
            context = ssl.create_default_context()
            context.sslsocket_class = _TLSSocket
            sock = context.wrap_socket(sock, server_hostname=target.host, do_handshake_on_connect=False)
            sock.deadline = deadline  # type: ignore[attr-defined]
            sock._time_left()  # type: ignore[attr-defined]
            sock.do_handshake()  # bounded as a whole by the timeout it starts with
    except BaseException:
        sock.close()
        raise
    return sock


def ascii_host(host: str) -> str:
    """A host name as the Host header and DNS spell it (an internationalised one in its `xn--` form)."""
    try:
        return host.encode("idna").decode()
    except UnicodeError:
        return ascii_only(host)


def resolver_until(deadline: float, resolver: Resolver = resolve) -> Resolver:
    """`resolver`, given up at `deadline` (time.monotonic()): a name whose DNS answers slowly (a receiver's
    own name server can) fails this attempt, to be retried, rather than holding a sender. The lookup goes on
    in a thread of its own until the system's resolver gives up; an address literal needs no thread."""

    def resolve_in_time(host: str, port: int) -> list[str]:
        if _is_address(host):
            return resolver(host, port)
        found: list[list[str] | BaseException] = []
        done = threading.Event()

        def lookup() -> None:
            try:
                found.append(resolver(host, port))
            except BaseException as exc:  # noqa: BLE001 (handed to the waiting sender)
                found.append(exc)
            finally:
                done.set()

        threading.Thread(target=lookup, name="callback-resolve", daemon=True).start()
        if not done.wait(max(0.0, deadline - time.monotonic())):
            raise CallbackRefused(f"callback_url's host {host!r} did not resolve in time", permanent=False)
        if isinstance(found[0], BaseException):
            raise found[0]
        return found[0]

    return resolve_in_time


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True

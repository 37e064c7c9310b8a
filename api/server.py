"""The gunicorn worker the API runs in: gevent, bounded reads, connections per client, gunicorn's own errors
in JSON.

gevent, because the API mostly waits: on Redis, and in /v1/translate and /api/translate on a job. A
waiting request holds a greenlet, not a thread, so slow clients and waiting calls cannot starve
/healthz or new submissions (a worker takes up to `worker_connections` connections at once). Each connection's
reads are bounded by its request's deadlines (api.connection_guard), and one client address may hold at most
TRANSQ_CONNECTIONS_PER_CLIENT of a worker's connections, so neither a trickling client nor one opening
connections by the thousand can take them all.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import gevent
from gunicorn import util
from gunicorn.workers.base_async import AsyncWorker
from gunicorn.workers.ggevent import GeventWorker

from api.connection_guard import GuardedSocket, HeadTimeout, ReadLimits
from shared.errors import ErrorCode
from shared.settings import Settings


def write_json_error(sock: Any, status_int: int, reason: str, mesg: str, headers: str = "") -> None:
    """gunicorn's util.write_error, answering in the API's error shape instead of HTML."""
    body = json.dumps({"error": {"code": ErrorCode.for_status(status_int).value, "message": mesg or reason}}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n{headers}"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


def client_of(addr: Any) -> str | None:
    """Whom a connection counts against: its IPv4 address, or its IPv6 address's /64 (one host's usual
    share); None for a Unix socket."""
    if not isinstance(addr, tuple) or not addr:
        return None
    try:
        ip = ipaddress.ip_address(addr[0])
    except ValueError:
        return str(addr[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class ApiWorker(GeventWorker):
    """gunicorn's gevent worker; every read of a connection is bounded (api.connection_guard), and a client
    address over its share of connections is answered 429 and closed."""

    def init_process(self) -> None:
        util.write_error = write_json_error  # gunicorn's error responses (bad request line, headers, chunks)
        settings = Settings.from_env()
        self.read_limits = ReadLimits.of(settings)
        self.connections_per_client = settings.connections_per_client
        self.open_connections: dict[str, int] = {}
        self.refusing: set[str] = set()
        super().init_process()

    def timeout_ctx(self) -> Any:
        # A backstop only: the guarded socket ends a head that is not received in time first (with a 408).
        return gevent.Timeout(self.read_limits.head_timeout + 2, False)

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        # GeventWorker.handle would make the socket blocking; instead every read gets its request's deadline.
        who = client_of(addr)
        limit = self.connections_per_client
        if who is not None and limit and self.open_connections.get(who, 0) >= limit:
            self.refuse(client, who)
            return
        if who is not None:
            self.open_connections[who] = self.open_connections.get(who, 0) + 1
        try:
            AsyncWorker.handle(self, listener, GuardedSocket(client, self.read_limits), addr)
        finally:
            if who is not None:
                left = self.open_connections[who] - 1
                if left:
                    self.open_connections[who] = left
                else:
                    del self.open_connections[who]
                self.refusing.discard(who)

    def refuse(self, client: Any, who: str) -> None:
        if who not in self.refusing:  # once per address until it is under its limit again
            self.refusing.add(who)
            self.log.warning("Refusing connections from %s: %d open already", who, self.connections_per_client)
        message = (
            f"too many connections from this client address (at most {self.connections_per_client} per API "
            "process); reuse a connection or retry later"
        )
        try:
            write_json_error(client, 429, "Too Many Requests", message, "Retry-After: 1\r\n")
        except OSError:
            pass
        finally:
            util.close(client)

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> Any:
        sock.begin_body(req)
        kept = super().handle_request(listener_name, req, sock, addr)  # StopIteration: the connection closes
        if not sock.drain_body(req):
            raise StopIteration()
        sock.begin_head()
        return kept

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        if not isinstance(exc, HeadTimeout):
            super().handle_error(req, client, addr, exc)
            return
        self.log.info("Cut off a request from %s: %s", (addr or ("",))[0], exc)
        try:
            write_json_error(client, 408, "Request Timeout", str(exc))
        except OSError:
            self.log.debug("Failed to send the 408.")

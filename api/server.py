"""The gunicorn worker the API runs in: gevent, read deadlines, and gunicorn's own errors in JSON.

gevent, because the API mostly waits: on Redis, and in /v1/translate and /api/translate on a job. A
waiting request holds a greenlet, not a thread, so slow clients and waiting calls cannot starve
/healthz or new submissions (a worker takes up to `worker_connections` connections at once).
"""

from __future__ import annotations

import json
from typing import Any

from gunicorn import util
from gunicorn.workers.base_async import AsyncWorker
from gunicorn.workers.ggevent import GeventWorker

from shared.errors import ErrorCode


def write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's util.write_error, answering in the API's error shape instead of HTML."""
    body = json.dumps({"error": {"code": ErrorCode.for_status(status_int).value, "message": mesg or reason}}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


class ApiWorker(GeventWorker):
    """gunicorn's gevent worker; a request's headers must arrive within `keepalive` seconds (gunicorn
    bounds each request's header read by it) and every read of its body must progress within as long."""

    def init_process(self) -> None:
        util.write_error = write_json_error  # gunicorn's error responses (bad request line, headers, chunks)
        super().init_process()

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        # GeventWorker.handle would make the socket blocking; instead every read gets a deadline, a second
        # later than the header deadline so that one, which gunicorn handles quietly, fires first.
        client.settimeout(self.cfg.keepalive + 1)
        AsyncWorker.handle(self, listener, client, addr)

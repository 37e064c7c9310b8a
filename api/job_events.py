"""A job's events as Server-Sent Events: GET /v1/jobs/<id>/events.

The stream replays the job's events stored in Redis (shared.store.job_events: its sentences as the workers
record them, its status and progress, a document's rendering) from the start, or from after the client's
Last-Event-ID, then follows them as they come, and ends with `done` (the job's view) once the job is final.
Each event's `id:` is its stream entry's, so a client that reconnects (EventSource does by itself) misses
nothing. Any API process serves any job: the stream is in Redis.

Bounded: a client holds at most TRANSQ_EVENT_STREAMS_PER_KEY streams over all API processes (429); a stream
ends after TRANSQ_EVENT_STREAM_SECONDS, or TRANSQ_EVENT_IDLE_SECONDS without an event; a comment every
TRANSQ_EVENT_HEARTBEAT_SECONDS keeps proxies open. A stream waits in XREAD with a BLOCK of at most a second, on
a gevent-patched socket (api.server): a waiting stream holds a greenlet and a pooled connection, never a
thread; a client that does not read is cut off by the send timeout (api.connection_guard).
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass

import redis
from flask import Blueprint, Response, request

from api.auth import client_id
from api.current import services
from api.jobs import load_job
from shared.contract.events import EventType
from shared.contract.job_view import download_url, job_view
from shared.errors import BadRequest, TooManyStreams
from shared.settings import Settings
from shared.store.backends import Services
from shared.store.job_events import Event, is_event_id
from shared.store.job_status import JobStatus

log = logging.getLogger(__name__)

bp = Blueprint("job_events", __name__, url_prefix="/v1/jobs")


@bp.get("/<job_id>/events")
def job_events(job_id: str) -> Response:
    """The job's events (404 for another key's job, as GET /v1/jobs/<id>), from after Last-Event-ID."""
    job = load_job(job_id)
    after = request.headers.get("Last-Event-ID", "").strip() or "0"
    if after != "0" and not is_event_id(after):
        raise BadRequest("Last-Event-ID: expected an event's id as this stream sent it (<ms>-<n>), or none")
    stream = EventStream(services(), job.id, after, client_id(), secrets.token_hex(8))
    stream.open()
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream.lines(), mimetype="text/event-stream", headers=headers)


@dataclass(frozen=True)
class StreamLimits:
    """How long a stream may stay open and idle, how often it says something, how long one read waits."""

    streams_per_client: int
    max_seconds: float
    idle_seconds: float
    heartbeat_seconds: float
    block_ms: int

    @classmethod
    def of(cls, settings: Settings) -> StreamLimits:
        return cls(
            streams_per_client=settings.event_streams_per_key,
            max_seconds=settings.event_stream_seconds,
            idle_seconds=settings.event_idle_seconds,
            heartbeat_seconds=settings.event_heartbeat_seconds,
            # under the broker client's socket timeout, so a wait is never taken for a dead server
            block_ms=max(50, min(1000, int(settings.redis_socket_timeout * 500))),
        )


class EventStream:
    """One client's stream of one job's events."""

    def __init__(self, svc: Services, job_id: str, after: str, client: str, slot: str):
        self.svc, self.job_id, self.after, self.client, self.slot = svc, job_id, after, client, slot
        self.limits = StreamLimits.of(svc.settings)
        # a slot lapses unless refreshed (each heartbeat), so one whose process died frees itself
        self.hold_ms = int(self.limits.heartbeat_seconds * 3000) + 5000

    def open(self) -> None:
        """Take one of the client's stream slots (429 when it holds them all)."""
        limit = self.limits.streams_per_client
        if limit and not self.svc.events.take_slot(self.client, self.slot, self.hold_ms, limit):
            retry = max(1, int(self.limits.heartbeat_seconds))
            raise TooManyStreams(f"at most {limit} event streams at once per API key; close one first", retry)

    def lines(self) -> Iterator[str]:
        """The stream's text; the slot is freed however it ends (done, a limit, the client gone)."""
        try:
            yield "retry: 2000\n\n"
            yield from self._follow()
        except redis.RedisError as exc:
            log.warning("job %s: event stream cut: %s", self.job_id, exc, extra={"job_id": self.job_id})
            yield ": the job store is unavailable; reconnect with Last-Event-ID\n\n"
        finally:
            try:
                self.svc.events.free_slot(self.client, self.slot)
            except redis.RedisError:
                pass  # it lapses by itself

    def _follow(self) -> Iterator[str]:
        limits = self.limits
        start = last_event = last_said = time.monotonic()
        while True:
            events = self.svc.events.read(self.job_id, self.after, limits.block_ms)
            final = any(_is_final(event) for event in events)
            if not events and self._job_final():
                # final (or gone) without a final event read yet: what its last move wrote comes first
                events, final = self._rest(), True
            now = time.monotonic()
            for event in events:
                self.after, last_event, last_said = event.id, now, now
                yield self._sse(event)
            if final:
                yield from self._done()
                return
            if now - start >= limits.max_seconds or now - last_event >= limits.idle_seconds:
                yield ": this stream's time is up; reconnect with Last-Event-ID\n\n"
                return
            if now - last_said >= limits.heartbeat_seconds:
                last_said = now
                if limits.streams_per_client:
                    self.svc.events.take_slot(self.client, self.slot, self.hold_ms, limits.streams_per_client)
                yield ": keep-alive\n\n"

    def _rest(self) -> list[Event]:
        """Every event after the last one sent, without waiting."""
        rest: list[Event] = []
        while batch := self.svc.events.read(self.job_id, rest[-1].id if rest else self.after, 0):
            rest += batch
        return rest

    def _sse(self, event: Event) -> str:
        data = event.data
        if event.kind == EventType.DOCUMENT:
            data = json.dumps({"download": download_url(self.job_id)})
        return f"id: {event.id}\nevent: {event.kind}\ndata: {data}\n\n"

    def _job_final(self) -> bool:
        """Whether the job is final (or gone): read when its stream has nothing new (a job stored before its
        events were, one whose stream a client asks for from its end, one that expired)."""
        status = self.svc.store.statuses([self.job_id])[0]
        return status is None or JobStatus(status).final

    def _done(self) -> Iterator[str]:
        job = self.svc.store.get(self.job_id)
        if job is None:
            yield ": the job is gone\n\n"
            return
        settings = self.svc.settings  # the same view as GET /v1/jobs/<id>: TRANSQ_MIN_CONFIDENCE's gate too
        view = job_view(job, self.svc.documents, settings.low_confidence, settings.min_confidence)
        yield f"event: {EventType.DONE}\ndata: {json.dumps(view, ensure_ascii=False)}\n\n"


def _is_final(event: Event) -> bool:
    if event.kind != EventType.PROGRESS:
        return False
    try:
        return JobStatus(json.loads(event.data).get("status")).final
    except ValueError:
        return False

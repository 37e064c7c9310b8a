"""The deliverer's loop: take due callbacks from the outbox, POST each job's view signed, settle the outcome
on the job's record. Up to TRANSQ_CALLBACK_CONCURRENCY at once (threads: the work is waiting on sockets),
each attempt within TRANSQ_CALLBACK_TIMEOUT as a whole, and only so many at once per receiver and per API key
(worker.callbacks.slots): a slow receiver holds only its own share of the senders."""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import redis

from shared.callback_policy import CallbackRefused, check_callback_url
from shared.contract.job_view import callback_body
from shared.settings import Settings
from shared.store.document_store import DocumentStore
from shared.store.jobs import JobStore
from shared.store.keys import Keys
from shared.store.redis_client import broker_redis
from worker.callbacks.outbox import Attempt, Due, Outbox
from worker.callbacks.sender import post, resolver_until
from worker.callbacks.signing import signed_headers
from worker.callbacks.slots import Slots

log = logging.getLogger("transq.callbacks")

# Touched every loop; the container's healthcheck (worker.callbacks.healthcheck) reads its age.
ALIVE_FILE = Path("/tmp/transq-callbacks-alive")
POLL_SECONDS = 0.25
BROKER_PAUSE = 2  # seconds between tries while the broker is unreachable
MAX_RETRY_SECONDS = 600.0
PEEK = 100  # due entries looked at per round, for the senders free


def lease_seconds(settings: Settings) -> float:
    """How long a taken callback is a deliverer's: its resolution, connection and answer, with room to spare."""
    return settings.callback_timeout * 2 + 5


def retry_delay(settings: Settings, attempt: int) -> float:
    """Exponential backoff from TRANSQ_CALLBACK_RETRY_SECONDS, capped, with +-10% jitter."""
    delay = min(MAX_RETRY_SECONDS, settings.callback_retry_seconds * 2 ** (attempt - 1))
    return delay * random.uniform(0.9, 1.1)


class Deliverer:
    """The outbox, the job store and the document store on one broker client (`client`, else its own)."""

    def __init__(self, settings: Settings, client: redis.Redis | None = None):
        self.settings = settings
        keys = Keys(settings.key_prefix)
        client = client or broker_redis(settings)
        self.outbox = Outbox(client, keys)
        self.store = JobStore(client, keys, settings.job_ttl, settings.result_ttl)
        self.documents = DocumentStore(client, keys, settings)
        self.stopping = threading.Event()
        self.slots = Slots(settings.callback_per_receiver, settings.callback_per_owner)
        self.in_flight: dict[Future[None], Due] = {}
        self._changed = threading.Event()  # an attempt ended

    def run(self) -> None:
        """Until `stopping` is set: then the callbacks in flight finish (each bounded by its timeout)."""
        with ThreadPoolExecutor(self.settings.callback_concurrency, thread_name_prefix="callback") as pool:
            while not self.stopping.is_set():
                _touch(ALIVE_FILE)
                busy = False
                try:
                    self._ended()
                    # callbacks off (no secret): due entries wait for one, then go (their deadline passed: once)
                    room = self.settings.callback_concurrency - len(self.in_flight)
                    busy = self._start(pool, room) if self.settings.callback_secret and room > 0 else False
                except redis.RedisError as exc:
                    log.warning("cannot take callbacks from the broker (again in %ds): %s", BROKER_PAUSE, exc)
                    self.stopping.wait(BROKER_PAUSE)
                if not busy:
                    self._changed.wait(POLL_SECONDS)
                    self._changed.clear()

    def _start(self, pool: ThreadPoolExecutor, room: int) -> bool:
        """Take what the free senders may send now and send it; defer the callbacks passed over (their receiver
        or key at its limit). Whether anything was taken or deferred (then look again at once)."""
        chosen, blocked = self.slots.choose(self.outbox.peek(PEEK), room)
        by_id = {due.job_id: due for due in chosen}
        taken = self.outbox.take_these(list(by_id), lease_seconds(self.settings))
        for attempt in taken:
            self.slots.started(by_id[attempt.job_id])
            future = pool.submit(self.deliver, attempt)
            self.in_flight[future] = by_id[attempt.job_id]
            future.add_done_callback(lambda _: self._changed.set())
        deferred = 0
        for group, passed in blocked.items():
            until, job_ids = self.outbox.defer([due.job_id for due in passed], self.settings.callback_timeout + 1)
            self.slots.deferred(group, job_ids, until)
            deferred += len(job_ids)
        if deferred:
            log.debug("%d callbacks wait for their receiver or key (%d in flight)", deferred, len(self.in_flight))
        return bool(taken or deferred)

    def _ended(self) -> None:
        """Forget the attempts that ended and wake the callbacks deferred for their receivers and keys."""
        woken: list[tuple[str, int]] = []
        for future in [f for f in self.in_flight if f.done()]:
            woken += self.slots.ended(self.in_flight.pop(future))
        self.outbox.wake(woken)

    def deliver(self, attempt: Attempt) -> None:
        try:
            self._deliver(attempt)
        except redis.RedisError as exc:  # its lease ends and it is taken again
            log.warning(
                "callback of job %s: broker error, attempt %d left to its lease: %s",
                attempt.job_id,
                attempt.number,
                exc,
            )
        except Exception:
            log.exception("callback of job %s: attempt %d failed unexpectedly", attempt.job_id, attempt.number)

    def _deliver(self, attempt: Attempt) -> None:
        deadline = time.monotonic() + self.settings.callback_timeout  # the whole attempt's
        job = self.store.get(attempt.job_id)
        if job is None or not job.callback_url:
            return  # gone: its entry leaves at the next take
        try:
            target = check_callback_url(job.callback_url, self.settings, resolver_until(deadline))
        except CallbackRefused as refused:
            if refused.permanent:
                state = self.outbox.failed(attempt, f"refused: {refused}")
                log.warning("callback of job %s refused at delivery: %s (%s)", job.id, refused, state or "fenced")
            else:
                self._retry(attempt, str(refused), None)
            return
        view = callback_body(job, self.documents, self.settings.low_confidence, self.settings.min_confidence)
        body = json.dumps(view, ensure_ascii=False, separators=(",", ":")).encode()
        headers = signed_headers(self.settings.callback_secret, body, job.callback_url, job.owner)
        headers["X-Transq-Job"] = job.id
        headers["X-Transq-Attempt"] = str(attempt.number)
        answer = post(target, body, headers, deadline)
        if answer.ok:
            state = self.outbox.delivered(attempt, answer.status or 0)
            log.info(
                "callback of job %s delivered (HTTP %s, attempt %d)%s",
                job.id,
                answer.status,
                attempt.number,
                "" if state else ", after its lease ended",
            )
        else:
            self._retry(attempt, answer.error, answer.status)

    def _retry(self, attempt: Attempt, error: str, status: int | None) -> None:
        delay = retry_delay(self.settings, attempt.number)
        state = self.outbox.retry(attempt, delay, self.settings.callback_deadline, error, status)
        if state == "failed":
            log.warning(
                "callback of job %s failed for good after %d attempts: %s", attempt.job_id, attempt.number, error
            )
        else:
            log.info(
                "callback of job %s: attempt %d failed (%s); again in %.1fs",
                attempt.job_id,
                attempt.number,
                error,
                delay,
            )


def _touch(path: Path) -> None:
    try:
        path.touch()
    except OSError:
        pass

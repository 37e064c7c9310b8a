"""A document stage process's lease on the job it parses or renders, and the sweep that sends lapsed jobs
again.

A pool process takes each job it is given (shared.store.stage_leases: a lease in Redis time and a new fence,
which its writes for the job carry) and a thread of the process renews the lease every third of
TRANSQ_DOCUMENT_LEASE_SECONDS while it works. The same thread sweeps: a job still `parsing` or `rendering`
whose lease lapsed (its stage was killed, stalled or cut off) has its Celery message unacknowledged at that
dead stage, which the broker gives back only after TRANSQ_VISIBILITY_TIMEOUT; the sweep sends it again now,
once per two leases across every live stage, and the stage that takes it counts a lost delivery (after
TRANSQ_MAX_DELIVERIES of them the job fails `worker_lost`: a document that kills every stage that takes it
does not loop). A process that saw the broker fail within two leases does not sweep: the holders may be
alive and take their leases back."""

from __future__ import annotations

import logging
import math
import os
import secrets
import socket
import threading
import time
from functools import cached_property

import redis
from celery import Celery

from shared.celery_factory import DOCUMENT_TASK, make_celery
from shared.settings import Settings
from shared.store.keys import Keys
from shared.store.stage_leases import StageLeases, Take
from shared.store.stats import Stats

log = logging.getLogger(__name__)

LAPSED_PER_SWEEP = 16  # the most jobs one sweep sends again (the next takes the rest)
_SEND_RETRY = {"max_retries": 5, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 2}


def parent_prefix() -> str:
    """What the ids of a stage's pool processes start with, as their parent (the Celery main process) sees it."""
    return f"{socket.gethostname()}:{os.getpid()}:"


def holder_id() -> str:
    """This pool process's id as a job's holder: host:parent pid:pid:random."""
    return f"{socket.gethostname()}:{os.getppid()}:{os.getpid()}:{secrets.token_hex(4)}"


class StageLease:
    """One pool process's hold on the job it works on (one at a time), and its renewing and sweeping thread."""

    def __init__(self, settings: Settings, leases: StageLeases, stats: Stats):
        self.settings, self.leases, self.stats = settings, leases, stats
        self.keys = Keys(settings.key_prefix)
        self.holder = holder_id()
        self.seconds = settings.document_lease_seconds
        self.wake_seconds = max(1, math.ceil(2 * self.seconds))  # one sender per job per two leases
        self._held: tuple[str, int] | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._trouble = -math.inf  # when this process last saw the broker fail (monotonic)

    @cached_property
    def _producer(self) -> Celery:  # its own connections, apart from the task's
        return make_celery(self.settings, name="transq-stage-sweep")

    def start(self) -> None:
        """Start the renewing and sweeping thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="stage-lease", daemon=True)
            self._thread.start()

    def take(self, job_id: str) -> Take:
        taken = self.leases.take(job_id, self.holder, self.seconds, self.settings.max_deliveries)
        if taken.outcome == "taken":
            with self._lock:
                self._held = (job_id, taken.fence)
        return taken

    def release(self, job_id: str, fence: int, counted: bool = True) -> None:
        """Done with the job (`counted` False: its task is retried, the take does not count as a delivery).
        On a broker failure its lease lapses instead, and a sweep sends it again."""
        with self._lock:
            self._held = None
        try:
            self.leases.release(job_id, self.holder, fence, counted)
        except redis.RedisError as exc:
            self.saw_trouble()
            log.warning("job %s: could not release its stage lease (%s); it lapses", job_id, exc)

    def saw_trouble(self) -> None:
        self._trouble = time.monotonic()

    def beat(self) -> None:
        """Renew the lease of the job held, then sweep (unless the broker failed within two leases)."""
        with self._lock:
            held = self._held
        if held is not None and not self.leases.renew(held[0], self.holder, held[1], self.seconds):
            log.warning("job %s: its stage lease was not renewed (done, or another stage took it over)", held[0])
            with self._lock:
                if self._held == held:
                    self._held = None
        if time.monotonic() - self._trouble >= 2 * self.seconds:
            self.sweep()

    def sweep(self) -> int:
        """Send again each document job whose stage lease lapsed; how many were sent."""
        sent = 0
        for job_id in self.leases.lapsed(LAPSED_PER_SWEEP):
            if self.leases.mark_woken(job_id, self.wake_seconds):
                log.warning("job %s: its document stage's lease lapsed, sending it to a live stage", job_id)
                self.stats.incr("leases_lapsed")
                self._producer.send_task(
                    DOCUMENT_TASK, args=[job_id], queue=self.keys.documents_queue, retry=True, retry_policy=_SEND_RETRY
                )
                sent += 1
        return sent

    def _run(self) -> None:
        while True:
            try:
                self.beat()
            except Exception as exc:  # noqa: BLE001 - keep renewing through broker outages
                self.saw_trouble()
                log.warning("document stage lease: %s", exc)
            time.sleep(self.seconds / 3)

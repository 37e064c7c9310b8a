"""Keeping a round's jobs leased while it runs, so that no other worker takes them as lost."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

import redis

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext

log = logging.getLogger(__name__)


class LeaseKeeper:
    """Renews the leases of the jobs in a round from a background thread."""

    def __init__(self, ctx: WorkerContext, job_ids: list[str]):
        self.ctx = ctx
        self.fences = {job_id: ctx.claims.fence(job_id) for job_id in job_ids}  # see Claims.claim
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self.ctx.activity.running_jobs = len(self.job_ids)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.ctx.activity.running_jobs = 0

    @property
    def job_ids(self) -> list[str]:
        return list(self.fences)

    def add(self, job_ids: list[str]) -> None:
        # One assignment: the renewing thread sees the old or the new dict.
        self.fences = {**self.fences, **{job_id: self.ctx.claims.fence(job_id) for job_id in job_ids}}
        self.ctx.activity.running_jobs = len(self.fences)

    def _run(self) -> None:
        interval = max(0.2, self.ctx.settings.lease_seconds / 3)
        while not self._stop.wait(interval):
            try:
                self.ctx.job_claims.once.renew_leases(self.fences, self.ctx.worker_id, self.ctx.settings.lease_seconds)
            except redis.RedisError as exc:
                self.ctx.broker.saw_trouble()
                log.warning("could not renew leases: %s", exc)

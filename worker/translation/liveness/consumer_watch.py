"""The last resort after a broker outage: a worker whose Celery consumer stopped taking messages exits, so its
supervisor (compose's restart policy, a Kubernetes Deployment) starts a fresh one.

shared.broker_transport and worker.translation.liveness.hard_timeouts keep the known paths (an
acknowledgement or a stored failure refused by a full broker) from leaving the consumer stuck; this watch covers
any other. Read from the pool process's heartbeat thread: the pool has been idle, the route's Celery queue has
held messages and the broker has answered without trouble, all for STALL_LEASES leases (a minute by default).
An idle consumer takes a waiting message within milliseconds, so that can only be a consumer that no longer
consumes. The pool process then stops its heartbeat and leaves the registry (the health check fails from then
on) and asks the main process for a warm shutdown; nothing is running, so it exits at once.
"""

from __future__ import annotations

import logging
import os
import signal
import time

import redis

from worker.translation.liveness.broker_health import BrokerHealth

log = logging.getLogger(__name__)

STALL_LEASES = 4


class ConsumerWatch:
    """Made when the heartbeat starts; `queue` is the route's Celery queue on the broker's `client`."""

    def __init__(self, client: redis.Redis, queue: str, broker: BrokerHealth, lease_seconds: float):
        self.client, self.queue, self.broker = client, queue, broker
        self.stall_seconds = STALL_LEASES * lease_seconds
        self._calm_since = time.monotonic()  # the last time the pool was busy, the queue empty or the broker down

    def stalled(self, idle_since: float, busy: bool) -> bool:
        """Called after each heartbeat that reached the broker."""
        now = time.monotonic()
        if busy or self.broker.troubled_within(self.stall_seconds):
            self._calm_since = now
            return False
        if not self.client.llen(self.queue):
            self._calm_since = now
            return False
        return now - max(self._calm_since, idle_since) > self.stall_seconds

    def give_up(self) -> None:
        log.error(
            "messages have waited %.0fs on this worker's queue while it sat idle with the broker up: its consumer "
            "no longer takes them; stopping the worker so that its supervisor starts a new one",
            self.stall_seconds,
        )
        os.kill(os.getppid(), signal.SIGTERM)

"""Riding out broker outages (a restart, a freeze, a full broker at maxmemory) instead of failing jobs.

A full broker refuses writes that need memory (OutOfMemoryError) but still serves reads, deletes and
expiry changes; like a restart it passes, so the worker waits and retries. A worker that has just seen
the broker in trouble does not take a running job whose lease lapsed as lost: the lease may have
expired during the outage while its holder was alive (see JobStore.claim).
"""

from __future__ import annotations

import logging
import time
from typing import Callable, TypeVar

import redis

log = logging.getLogger(__name__)
T = TypeVar("T")

_TRANSIENT_ERRORS = (
    redis.ConnectionError,
    redis.TimeoutError,
    redis.BusyLoadingError,
    redis.exceptions.OutOfMemoryError,
)


def is_transient(exc: BaseException) -> bool:
    """An outage that passes: the broker down, slow, loading, or full (a script refused at maxmemory
    fails as a plain ResponseError carrying Redis's -OOM)."""
    return isinstance(exc, _TRANSIENT_ERRORS) or (isinstance(exc, redis.ResponseError) and "OOM" in str(exc))


class BrokerHealth:
    """When this process last saw the broker fail."""

    def __init__(self) -> None:
        self._trouble_at = float("-inf")

    def saw_trouble(self) -> None:
        self._trouble_at = time.monotonic()

    def troubled_within(self, seconds: float) -> bool:
        return time.monotonic() - self._trouble_at < seconds

    def retry(self, call: Callable[[], T], grace_seconds: float = 120.0) -> T:
        """Run a broker call, waiting out an outage for up to `grace_seconds` with growing pauses."""
        deadline = time.monotonic() + grace_seconds
        delay = 0.2
        while True:
            try:
                return call()
            except redis.RedisError as exc:
                if not is_transient(exc) or time.monotonic() > deadline:
                    raise
                self.saw_trouble()
                log.warning("broker Redis unavailable or full (%s); retrying in %.1fs", exc, delay)
                time.sleep(delay)
                delay = min(delay * 2, 5.0)

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
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

log = logging.getLogger(__name__)
T = TypeVar("T")
GRACE_SECONDS = 120.0  # how long a broker call waits out an outage before its error stands

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
    """When this process last saw the broker fail, and the one way its broker calls wait out an outage."""

    def __init__(self) -> None:
        self._trouble_at = float("-inf")

    def saw_trouble(self) -> None:
        self._trouble_at = time.monotonic()

    def troubled_within(self, seconds: float) -> bool:
        return time.monotonic() - self._trouble_at < seconds

    def retry(self, call: Callable[[], T], grace_seconds: float = GRACE_SECONDS) -> T:
        """Run a broker call, waiting out a transient failure (see is_transient) for up to `grace_seconds`
        with doubling pauses (redis-py's Retry and ExponentialBackoff: 0.2 s, 0.4 s, ... 5 s); every failure
        is recorded (saw_trouble), so a lapsed lease is not taken as lost meanwhile."""
        deadline = time.monotonic() + grace_seconds

        def failed(exc: Exception) -> None:
            if time.monotonic() > deadline:
                raise exc
            self.saw_trouble()
            log.warning("broker Redis unavailable or full (%s); retrying", exc)

        retry = Retry(ExponentialBackoff(cap=5.0, base=0.1), retries=-1, supported_errors=(redis.RedisError,))
        return retry.call_with_retry(call, failed, is_retryable=is_transient)

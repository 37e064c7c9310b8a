"""Riding out broker outages (a restart, a freeze, a full broker at maxmemory) instead of failing jobs.

A full broker refuses writes that need memory (OutOfMemoryError) but still serves reads, deletes and
expiry changes; like a restart it passes, so the worker waits and retries. A worker that has just seen
the broker in trouble does not take a running job whose lease lapsed as lost: the lease may have
expired during the outage while its holder was alive (see JobStore.claim).

The job store and the claims store as the worker uses them are a RetryingStore and a RetryingClaims: each
of their calls waits out an outage
(BrokerHealth.retry), typed as the store's own method, so the worker's code calls the store plainly instead
of wrapping each call. `once` is the store itself, for the calls that must answer at once (a decoding batch
asking for arrivals, the lease keeper, the heartbeat's sweeps, a hard timeout stored from Celery's
callback): they treat a failure as an answer of their own.
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Callable, Concatenate, Generic, ParamSpec, TypeVar

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from shared.broker_transport import is_transient
from shared.store.job_claims import JobClaims
from shared.store.jobs import JobStore

log = logging.getLogger(__name__)
T = TypeVar("T")
P = ParamSpec("P")
GRACE_SECONDS = 120.0  # how long a broker call waits out an outage before its error stands


class BrokerHealth:
    """When this process last saw the broker fail, and the one way its broker calls wait out an outage."""

    def __init__(self) -> None:
        self._trouble_at = float("-inf")

    def saw_trouble(self) -> None:
        self._trouble_at = time.monotonic()

    def troubled_within(self, seconds: float) -> bool:
        return time.monotonic() - self._trouble_at < seconds

    def lapse_is_loss(self, lease_seconds: float) -> bool:
        """Whether a running job whose lease lapsed counts as lost now: not within two leases of a broker
        outage this process saw (its holder may be alive, its lease expired during the outage)."""
        return not self.troubled_within(2 * lease_seconds)

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


S = TypeVar("S")


def _retried(method: Callable[Concatenate[S, P], T]) -> Callable[Concatenate[_Retrying[S], P], T]:
    """The store's `method` called through BrokerHealth.retry, with the method's own signature."""

    @functools.wraps(method)
    def call(self: _Retrying[S], /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.broker.retry(lambda: method(self.once, *args, **kwargs))

    return call


class _Retrying(Generic[S]):
    def __init__(self, store: S, broker: BrokerHealth):
        self.once = store
        self.broker = broker


class RetryingStore(_Retrying[JobStore]):
    """The job store's calls the worker makes, each waiting out a broker outage; `once` is the store itself.
    A call the worker does not make here is not here (ask `once`, or add it)."""

    get = _retried(JobStore.get)
    get_many = _retried(JobStore.get_many)
    statuses = _retried(JobStore.statuses)
    sizes = _retried(JobStore.sizes)
    translated = _retried(JobStore.translated)
    fail = _retried(JobStore.fail)


class RetryingClaims(_Retrying[JobClaims]):
    """The worker's claims on jobs (shared.store.job_claims) as it makes them, each waiting out a broker
    outage; `once` is the claims store itself (the lease keeper, the sweeps, a hard timeout)."""

    oldest_pending = _retried(JobClaims.oldest_pending)
    partial_progress = _retried(JobClaims.partial_progress)
    partial_fidelity = _retried(JobClaims.partial_fidelity)
    claim = _retried(JobClaims.claim)
    woken = _retried(JobClaims.woken)
    mark_woken = _retried(JobClaims.mark_woken)
    drop_lease = _retried(JobClaims.drop_lease)
    park = _retried(JobClaims.park)
    set_progress = _retried(JobClaims.set_progress)

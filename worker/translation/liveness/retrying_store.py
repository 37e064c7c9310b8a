"""The job store as the worker uses it: every call waits out a broker outage (BrokerHealth.retry), so the
worker's code calls the store plainly instead of wrapping each call. `once` is the store itself, for the
calls that must answer at once (a decoding batch asking for arrivals, the lease keeper, the heartbeat's
sweeps): they treat a failure as an answer of their own."""

from __future__ import annotations

import functools
from typing import Any, Callable

from shared.store.job_claims import JobClaims
from shared.store.jobs import JobStore
from worker.translation.liveness.broker_health import BrokerHealth


class RetryingStore:
    def __init__(self, store: JobStore | JobClaims, broker: BrokerHealth):
        self.once = store
        self.broker = broker

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.once, name)
        if not callable(method):
            return method

        @functools.wraps(method)
        def retried(*args: Any, **kwargs: Any) -> Any:
            return self.broker.retry(lambda: method(*args, **kwargs))

        return retried

"""The worker's one retry mechanism: every call of its job store (RetryingStore) waits out a broker outage,
which it records (so no lapsed lease counts as lost meanwhile); `once` answers at once; an error that is no
outage stands."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from devstack.redis_server import RedisServer
from tests.worker.translation.worker_jobs import make_parts, submit
from worker.translation.liveness.broker_health import BrokerHealth, RetryingClaims, RetryingStore


@pytest.fixture
def restartable(tmp_path):
    with RedisServer(directory=str(tmp_path), appendonly=True) as server:
        yield server


def test_a_store_call_waits_out_a_broker_restart_and_records_the_outage(model_dir, restartable):
    parts = make_parts(model_dir, restartable)
    job = submit(parts, "你好。")
    lease = parts.settings.lease_seconds
    assert parts.broker.lapse_is_loss(lease)
    restartable.stop()
    with pytest.raises(redis.ConnectionError):
        parts.store.once.get(job)  # the store itself does not wait
    restart = threading.Timer(1.5, restartable.start)
    restart.start()
    started = time.monotonic()
    try:
        assert parts.store.get(job).id == job  # waited for the broker to come back (appendonly: the job is there)
    finally:
        restart.join()
    assert time.monotonic() - started >= 1
    assert parts.broker.troubled_within(60) and not parts.broker.lapse_is_loss(lease)


def test_an_error_that_is_no_outage_is_raised_at_once_and_not_recorded(parts):
    parts.backends.redis.set(parts.backends.keys.job("not-a-hash"), "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        parts.store.statuses(["not-a-hash"])
    assert not parts.broker.troubled_within(60)


def test_an_outage_longer_than_the_grace_period_raises_its_error():
    broker = BrokerHealth()
    calls = []

    def down() -> None:
        calls.append(time.monotonic())
        raise redis.ConnectionError("down")

    with pytest.raises(redis.ConnectionError):
        broker.retry(down, grace_seconds=0.5)
    assert len(calls) >= 2 and calls[-1] - calls[0] >= 0.5 and broker.troubled_within(5)


def test_the_retrying_store_has_the_store_s_own_signatures_and_only_the_calls_the_worker_makes():
    import inspect

    from shared.store.job_claims import JobClaims
    from shared.store.jobs import JobStore

    for name in ("translated", "fail", "get_many"):
        assert inspect.signature(getattr(RetryingStore, name)) == inspect.signature(getattr(JobStore, name)), name
    for name in ("claim", "set_progress", "park"):
        assert inspect.signature(getattr(RetryingClaims, name)) == inspect.signature(getattr(JobClaims, name)), name
    assert not hasattr(RetryingStore, "create") and not hasattr(RetryingClaims, "renew_leases")

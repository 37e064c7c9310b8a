"""The heartbeat's sweeps send a wake-up (a real Celery message on the route's queue) for a running job whose
lease lapsed and for a job forgotten in the queue, once per job and lease period, and none while a broker
outage may explain the lapse or while this worker is busy."""

from __future__ import annotations

import time

import pytest

from tests.worker.translation.worker_jobs import claim, make_parts, submit
from worker.translation.liveness.consumer_watch import ConsumerWatch
from worker.translation.liveness.heartbeat import Heartbeat
from worker.translation.liveness.worker_id import read_id_file

LEASE = 2.0  # long enough that a loaded machine does not let a lease lapse between two lines


@pytest.fixture
def short_leases(model_dir, redis_server):
    return make_parts(model_dir, redis_server, lease_seconds=LEASE)


def _messages(parts) -> int:  # type: ignore[no-untyped-def]
    return parts.backends.redis.llen(parts.backends.keys.queue(parts.route.key))


def test_a_running_job_whose_lease_lapsed_is_woken_once(short_leases):
    parts = short_leases
    sweeps = parts.sweeps
    job = submit(parts, "你好。")
    claim(parts, job)  # and then its worker stops renewing the lease
    assert sweeps.wake_lapsed_jobs() == 0  # the lease holds
    time.sleep(LEASE + 0.2)
    parts.broker.saw_trouble()
    assert sweeps.wake_lapsed_jobs() == 0  # an outage just now: its holder may be alive
    time.sleep(2 * LEASE)
    assert sweeps.wake_lapsed_jobs() == 1 and _messages(parts) == 1
    assert sweeps.wake_lapsed_jobs() == 0 and _messages(parts) == 1  # one wake-up per lease period
    assert parts.backends.stats.read()[0]["leases_lapsed"] == 1


def test_a_forgotten_waiting_job_is_woken_by_an_idle_worker_only(short_leases):
    parts = short_leases
    sweeps = parts.sweeps
    job = submit(parts, "你好。")
    with parts.activity.round():
        time.sleep(LEASE + 0.1)
        assert sweeps.wake_forgotten_jobs() == 0  # busy: its round may take the job
    assert sweeps.wake_forgotten_jobs() == 0  # idle for less than a lease
    time.sleep(LEASE + 0.1)
    assert sweeps.wake_forgotten_jobs() == 1 and _messages(parts) == 1
    assert parts.job_claims.mark_woken(job, 10) is False  # the wake key is taken until the message is consumed


def test_no_wake_up_is_sent_again_while_messages_wait_on_the_queue(short_leases):
    parts = short_leases
    submit(parts, "你好。")
    parts.wakeups.wake(submit(parts, "再见。"))  # a message an idle worker takes within milliseconds
    time.sleep(LEASE + 0.1)
    assert parts.sweeps.wake_forgotten_jobs() == 0 and _messages(parts) == 1


def test_a_job_whose_message_was_lost_is_woken_within_seconds_though_stale_messages_keep_coming(short_leases):
    """Issue 38 item 7: messages of finished jobs (rounds of a millisecond) arriving more often than every two
    leases kept the worker from ever being idle two leases, and a queued job whose own message was lost waited
    for minutes. Now the sweep wakes it once the worker has been idle a lease and no message waits."""
    parts = short_leases
    sweeps = parts.sweeps
    job = submit(parts, "你好。")  # stored as the API stores it, its message lost
    started, sent = time.monotonic(), 0
    while not sent:
        assert time.monotonic() - started < 6 * LEASE, "the lost wake-up was never sent again"
        with parts.activity.round():  # a stale message's round, every 1.5 leases
            pass
        for _ in range(3):
            time.sleep(LEASE / 2)
            sent += sweeps.wake_forgotten_jobs()
    assert sent == 1 and _messages(parts) == 1
    assert parts.job_claims.mark_woken(job, 10) is False  # the wake-up sent was this job's


def test_a_beat_registers_the_worker_and_writes_its_id_file(model_dir, redis_server, tmp_path):
    parts = make_parts(model_dir, redis_server, worker_id_file=str(tmp_path / "worker-id"))
    queue = parts.backends.keys.queue(parts.route.key)
    watch = ConsumerWatch(parts.backends.redis, queue, parts.broker, parts.settings.lease_seconds)
    heartbeat = Heartbeat(
        parts.settings,
        parts.backends.registry,
        parts.worker_id,
        parts.route,
        parts.namespace,
        parts.activity,
        parts.broker,
        parts.sweeps,
        watch,
    )
    heartbeat.start({"load_seconds": 1.5})
    try:
        assert read_id_file(parts.settings) == parts.worker_id
        deadline = time.monotonic() + 30
        while not parts.backends.registry.live_workers():
            assert time.monotonic() < deadline
            time.sleep(0.1)
        (info,) = parts.backends.registry.live_workers()
        assert info["load_seconds"] == 1.5 and info["busy"] is False and info["running_jobs"] == 0
    finally:
        heartbeat.stop()
    assert parts.backends.registry.live_workers() == []

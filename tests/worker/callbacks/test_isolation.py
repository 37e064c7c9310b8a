"""Slow receivers against the real deliverer process (hostile-client trial, issue 31 item 4): receivers on
127.0.0.2-5 that answer one byte a second, each byte well inside any read timeout, so only the bound on a
whole attempt (TRANSQ_CALLBACK_TIMEOUT) cuts them; and a healthy receiver on 127.0.0.1 whose callback must
not wait for them. Real Redis, jobs made final by the real store."""

from __future__ import annotations

import time

import pytest

from tests.worker.callbacks.conftest import callback_settings, finished_job, wait_until, where
from tests.worker.callbacks.test_delivery import delivery
from tests.worker.callbacks.trickle import ANSWER, SlowReceiver, most_at_once

TIMEOUT = 4.0  # each attempt's, as a whole
HEALTHY_WITHIN = 2.0  # seconds: well under TIMEOUT, so only isolation (not the cut) can meet it


@pytest.fixture
def slow_receivers():
    """Four (TRANSQ_CALLBACK_CONCURRENCY here) trickling receivers, each on an address of its own."""
    receivers = [SlowReceiver(f"127.0.0.{n}", every=1.0) for n in range(2, 6)]
    yield receivers
    for found in receivers:
        found.stop()


def settings_for(redis_url: str, receivers: list[str], **overrides: object):  # type: ignore[no-untyped-def]
    values: dict[str, object] = dict(
        callback_timeout=TIMEOUT,
        callback_concurrency=4,
        callback_per_receiver=1,
        callback_per_owner=2,
        callback_retry_seconds=0.2,
    )
    values.update(overrides)
    return callback_settings(redis_url, ",".join(receivers), **values)


def assert_cut_at_the_timeout(slow: SlowReceiver) -> None:
    """Its first attempt was cut at TIMEOUT (the answer unfinished), and the next one delivered."""
    first = slow.connections[0]
    assert first.closed is not None and 0 < first.sent < len(ANSWER)
    assert TIMEOUT - 0.5 <= first.closed - first.opened <= TIMEOUT + 1.5, first.closed - first.opened
    assert len(slow.connections) >= 2 and slow.connections[-1].sent == len(ANSWER)


def test_one_keys_slow_receivers_do_not_hold_up_another_keys_callback(
    redis_server, store, receiver, slow_receivers, start_deliverer
):
    """The trial's attack: one key's four receivers trickle, which held all four senders (a healthy callback
    arrived 78 s late). Now that key holds at most TRANSQ_CALLBACK_PER_OWNER senders, each attempt is cut at
    TRANSQ_CALLBACK_TIMEOUT and retried, and another key's callback goes at once."""
    allowed = [where(receiver.url), *(slow.where for slow in slow_receivers)]
    start_deliverer(settings_for(redis_server.url, allowed))
    attacks = [finished_job(store, slow.url, owner="key:attacker") for slow in slow_receivers]
    wait_until(lambda: sum(len(slow.connections) for slow in slow_receivers) >= 2, what="the slow attempts")
    final = time.monotonic()
    healthy = finished_job(store, receiver.url, owner="key:victim")
    (got,) = receiver.wait_for(1, timeout=30)
    latency = got.at - final
    assert latency < HEALTHY_WITHIN, f"the healthy callback took {latency:.2f}s"
    assert delivery(store, healthy.id)["attempts"] == 1
    for job in attacks:  # each retried after its cut, not lost
        assert delivery(store, job.id)["attempts"] == 2
    for slow in slow_receivers:
        assert_cut_at_the_timeout(slow)
    assert most_at_once([c for slow in slow_receivers for c in slow.connections]) == 2  # TRANSQ_CALLBACK_PER_OWNER
    print(f"healthy callback {latency:.2f}s after its job was final, under four trickling receivers")


def test_many_callbacks_to_one_slow_receiver_hold_one_sender_without_api_keys(
    redis_server, store, receiver, slow_receivers, start_deliverer
):
    """API keys off (no owner): one receiver trickling its answers gets TRANSQ_CALLBACK_PER_RECEIVER senders
    however many of its callbacks are due; the rest wait in the outbox, uncounted, and all arrive."""
    slow = slow_receivers[0]
    slow.slow = 2
    start_deliverer(settings_for(redis_server.url, [where(receiver.url), slow.where]))
    attacks = [finished_job(store, slow.url) for _ in range(4)]
    wait_until(lambda: slow.connections, what="the first slow attempt")
    final = time.monotonic()
    healthy = finished_job(store, receiver.url)
    (got,) = receiver.wait_for(1, timeout=30)
    assert got.at - final < HEALTHY_WITHIN, f"the healthy callback took {got.at - final:.2f}s"
    assert delivery(store, healthy.id)["attempts"] == 1
    attempts = sorted(delivery(store, job.id)["attempts"] for job in attacks)
    assert attempts == [1, 1, 2, 2]  # two were cut once and retried; none counted while it waited
    assert most_at_once(slow.connections) == 1  # TRANSQ_CALLBACK_PER_RECEIVER
    assert_cut_at_the_timeout(slow)

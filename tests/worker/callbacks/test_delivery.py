"""Callbacks end to end through real parts: jobs made final by the real store (its Lua outbox), the real
deliverer process (`python -m worker.callbacks`), a real HTTP receiver on 127.0.0.1 (allowed by the test's
settings), a real Redis."""

from __future__ import annotations

import dataclasses
import json
import os
import signal

from shared.contract.job_view import job_view
from shared.store.document_store import DocumentStore
from shared.store.job_claims import Claimant
from shared.store.jobs import JobStore
from shared.store.keys import Keys
from tests.worker.callbacks.conftest import (
    ROUTE,
    SECRET,
    callback_settings,
    claims_of,
    documented_verify,
    finished_job,
    queued_job,
    wait_until,
    where,
)
from worker.callbacks.signing import verify


def delivery(store: JobStore, job_id: str, state: str = "delivered") -> dict:
    """The job's callback once it is `state`."""
    return wait_until(  # type: ignore[return-value]
        lambda: (job := store.get(job_id)) and job.callback.state == state and dataclasses.asdict(job.callback),
        what=f"callback of {job_id} {state}",
    )


def signature_verifies(received, url: str, secret: str = SECRET, owner: str = "") -> bool:  # type: ignore[no-untyped-def]
    headers = received.headers
    return verify(secret, headers["X-Transq-Timestamp"], headers["X-Transq-Signature"], received.body, url, owner)


def test_a_finished_job_is_posted_to_its_callback_signed(receiver, store, settings, start_deliverer):
    start_deliverer(settings)
    job = finished_job(store, receiver.url)
    (got,) = receiver.wait_for(1)
    assert delivery(store, job.id) == {"state": "delivered", "attempts": 1, "last_status": 200, "last_error": None}
    assert got.path == "/hooks/transq?from=test"
    assert got.headers["Content-Type"] == "application/json" and got.headers["X-Transq-Job"] == job.id
    view = json.loads(got.body)
    documents = DocumentStore(store.client, Keys(settings.key_prefix), settings)
    expected = job_view(store.get(job.id), documents, settings.low_confidence)
    expected.pop("callback")
    assert view == expected  # the job's view, as GET /v1/jobs/<id> answers (less its callback's own state)
    assert view["status"] == "succeeded" and view["result"] == {"translations": ["Hello."]}
    assert signature_verifies(got, receiver.url)
    assert got.headers["X-Transq-Target"] == receiver.url and got.headers["X-Transq-Owner"] == ""
    documented_check = documented_verify()  # the snippet in docs/api.md, as a receiver would copy it
    assert documented_check(SECRET.encode(), got.headers, got.body, receiver.url, "")
    assert not documented_check(SECRET.encode(), got.headers, got.body.replace(b"Hello", b"Hallo"), receiver.url, "")
    # what a receiver's check refuses: another secret, a changed body, a replayed (old) timestamp
    assert not signature_verifies(got, receiver.url, secret="another-secret-0123456789")
    timestamp, signature = got.headers["X-Transq-Timestamp"], got.headers["X-Transq-Signature"]
    assert not verify(SECRET, timestamp, signature, got.body + b" ", receiver.url, "")
    old = str(int(timestamp) - 3600)
    assert not verify(SECRET, old, signature, got.body, receiver.url, "")
    assert store.client.zcard(store.keys.callbacks_due) == 0


def test_a_receiver_that_fails_twice_gets_the_callback_on_the_third_attempt(receiver, store, settings, start_deliverer):
    receiver.plan = [500, "timeout", 200]
    start_deliverer(settings)
    job = finished_job(store, receiver.url, outcome="fail")
    got = receiver.wait_for(3)
    assert delivery(store, job.id) == {"state": "delivered", "attempts": 3, "last_status": 200, "last_error": None}
    assert [r.headers["X-Transq-Attempt"] for r in got] == ["1", "2", "3"]
    assert all(signature_verifies(r, receiver.url) for r in got)
    assert {r.body for r in got} == {got[0].body}  # the same view each time
    assert json.loads(got[0].body)["error"] == {"code": "timeout", "message": "too slow"}


def test_a_receiver_that_never_answers_2xx_fails_after_the_deadline(redis_server, receiver, store, start_deliverer):
    receiver.plan = [503] * 100
    start_deliverer(callback_settings(redis_server.url, where(receiver.url), callback_deadline=2))
    job = finished_job(store, receiver.url)
    callback = delivery(store, job.id, "failed")
    assert callback["attempts"] >= 2 and callback["last_status"] == 503
    assert callback["last_error"] == "the receiver answered HTTP 503"
    assert store.client.zcard(store.keys.callbacks_due) == 0


def test_a_deliverer_killed_mid_delivery_and_started_again_still_delivers(receiver, store, settings, start_deliverer):
    receiver.plan = ["hang"]  # the first attempt is held open while its deliverer is killed
    first = start_deliverer(settings)
    job = finished_job(store, receiver.url)
    receiver.wait_for(1)
    os.kill(first.pid, signal.SIGKILL)
    first.process.wait(timeout=10)
    receiver.release.set()
    start_deliverer(settings)  # its lease ends; the new deliverer takes the entry again
    got = receiver.wait_for(2, timeout=60)
    assert delivery(store, job.id) == {"state": "delivered", "attempts": 2, "last_status": 200, "last_error": None}
    assert got[1].headers["X-Transq-Attempt"] == "2" and signature_verifies(got[1], receiver.url)


def test_a_job_whose_worker_died_too_often_still_gets_its_callback(receiver, store, settings, start_deliverer):
    """No callback lost when a worker is killed: the claim that fails the job `worker_lost` queues it."""
    start_deliverer(settings)
    job = queued_job(receiver.url)
    store.create(job)
    claims = claims_of(store)
    claim = claims.claim(job.id, Claimant(ROUTE, "worker-1", 5, 1))
    claims.drop_lease(job.id, claim.fence)  # its worker was killed: the lease lapsed
    claims.claim(job.id, Claimant(ROUTE, "worker-2", 5, 1))
    (got,) = receiver.wait_for(1)
    assert json.loads(got.body)["error"]["code"] == "worker_lost"
    assert delivery(store, job.id)["attempts"] == 1


def test_a_loopback_callback_is_refused_at_delivery_without_the_allow_setting(
    redis_server, receiver, store, start_deliverer
):
    """Accepted under one policy, delivered under a stricter one (DNS or settings change): refused, never sent."""
    port = where(receiver.url).split(":")[1]
    start_deliverer(
        callback_settings(
            redis_server.url,
            callback_allow_http_hosts=f"127.0.0.1:{port},localhost:{port}",
            callback_allow_private_hosts="",
        )
    )
    by_address = finished_job(store, receiver.url)
    by_name = finished_job(store, receiver.url.replace("127.0.0.1", "localhost"))
    for job in (by_address, by_name):
        callback = delivery(store, job.id, "failed")
        assert callback["attempts"] == 1 and callback["last_status"] is None
        assert "not a public address (loopback)" in callback["last_error"]
    assert receiver.received == []


def test_an_https_callback_checks_the_certificate_against_the_urls_name(
    redis_server, tls_receiver, store, start_deliverer
):
    """The deliverer connects to the address it checked, yet verifies the certificate for the URL's name: a
    certificate for `localhost` passes at https://localhost, and is refused at https://127.0.0.1."""
    receiver, ca_file = tls_receiver
    port = where(receiver.url).split(":")[1]
    settings = callback_settings(
        redis_server.url, callback_allow_private_hosts=f"localhost:{port},127.0.0.1:{port}", callback_deadline=1
    )
    start_deliverer(settings, SSL_CERT_FILE=ca_file)
    by_name = finished_job(store, receiver.url.replace("127.0.0.1", "localhost"))
    (got,) = receiver.wait_for(1)
    assert delivery(store, by_name.id)["last_status"] == 200
    assert signature_verifies(got, receiver.url.replace("127.0.0.1", "localhost"))
    assert got.headers["Host"] == receiver.url.split("/")[2].replace("127.0.0.1", "localhost")
    by_address = finished_job(store, receiver.url)
    callback = delivery(store, by_address.id, "failed")
    assert "certificate is not valid for '127.0.0.1'" in callback["last_error"] and callback["last_status"] is None
    assert len(receiver.received) == 1


def test_a_pending_callback_survives_a_broker_restart_and_the_deliverer_waits_it_out(
    tmp_path, receiver, start_deliverer
):
    """The broker (AOF) killed while a callback waits for its retry, and started again: the deliverer stays
    up through the outage, and the callback is delivered from the outbox the broker kept."""
    import redis

    from devstack.redis_server import RedisServer
    from shared.store.keys import Keys

    (tmp_path / "broker").mkdir()
    broker = RedisServer(appendonly=True, directory=str(tmp_path / "broker")).start()
    try:
        client = redis.Redis.from_url(broker.url, decode_responses=True)
        settings = callback_settings(broker.url, where(receiver.url), callback_retry_seconds=1.0)
        store = JobStore(client, Keys(settings.key_prefix), settings.job_ttl, settings.result_ttl)
        receiver.plan = [500]
        deliverer = start_deliverer(settings)
        job = finished_job(store, receiver.url)
        receiver.wait_for(1)
        wait_until(lambda: store.get(job.id).callback.last_status == 500, what="the first attempt settled")
        broker.kill()
        wait_until(lambda: "cannot take callbacks from the broker" in deliverer.log_tail(), what="the outage seen")
        assert deliverer.process.poll() is None
        broker.start()
        got = receiver.wait_for(2, timeout=60)
        assert delivery(store, job.id) == {"state": "delivered", "attempts": 2, "last_status": 200, "last_error": None}
        assert signature_verifies(got[1], receiver.url)
    finally:
        broker.stop()


def test_a_private_host_allowed_on_one_port_is_refused_on_another_at_delivery(
    redis_server, receiver, store, start_deliverer
):
    """Accepted while the receiver's `127.0.0.1:<port>` was allowed; the deliverer's setting now names another
    port of that host, and the bare host (its default port only): refused at once, nothing sent (the trial
    had a callback POSTed to the broker's Redis port of an allowed host)."""
    port = int(where(receiver.url).split(":")[1])
    allowed_elsewhere = f"127.0.0.1:{port + 1},127.0.0.1"
    start_deliverer(
        callback_settings(
            redis_server.url, callback_allow_http_hosts="*", callback_allow_private_hosts=allowed_elsewhere
        )
    )
    job = finished_job(store, receiver.url)
    callback = delivery(store, job.id, "failed")
    assert callback["attempts"] == 1 and callback["last_status"] is None
    assert "not a public address (loopback)" in callback["last_error"]
    assert f"127.0.0.1:{port} is not one" in callback["last_error"]
    assert receiver.received == []

"""One secret signs every key's callbacks (hostile-client trial, issue 31 item 8): the signature covers the
target URL and the owning key's id with the body, so key A's callback replayed to key B's receiver fails
the check docs/api.md shows (run as copied) with B's own URL and key id; the genuine ones pass. The real
deliverer process, real receivers, real Redis."""

from __future__ import annotations

import requests

from tests.worker.callbacks.conftest import SECRET, callback_settings, documented_verify, finished_job, where
from tests.worker.callbacks.test_delivery import delivery
from worker.callbacks.signing import verify

KEY_A = "key:" + "a" * 32
KEY_B = "key:" + "b" * 32
SIGNED = ("X-Transq-Timestamp", "X-Transq-Signature", "X-Transq-Target", "X-Transq-Owner", "Content-Type")


def test_key_as_callback_replayed_to_key_bs_receiver_fails_bs_check(
    redis_server, store, make_receiver, start_deliverer
):
    a, b = make_receiver(), make_receiver("127.0.0.2")
    start_deliverer(callback_settings(redis_server.url, f"{where(a.url)},{where(b.url)}"))
    job_a = finished_job(store, a.url, owner=KEY_A)
    job_b = finished_job(store, b.url, owner=KEY_B)
    (got_a,), (got_b,) = a.wait_for(1), b.wait_for(1)
    assert delivery(store, job_a.id)["state"] == delivery(store, job_b.id)["state"] == "delivered"
    check = documented_verify()
    secret = SECRET.encode()
    # the genuine callbacks pass, each at its own receiver, with its own URL and key id
    assert check(secret, got_a.headers, got_a.body, a.url, KEY_A)
    assert check(secret, got_b.headers, got_b.body, b.url, KEY_B)
    assert (got_a.headers["X-Transq-Target"], got_a.headers["X-Transq-Owner"]) == (a.url, KEY_A)
    # A's receiver replays A's callback, as it came, to B's receiver: B's check refuses it
    replayed = requests.post(b.url, data=got_a.body, headers={h: got_a.headers[h] for h in SIGNED}, timeout=10)
    assert replayed.status_code == 200
    got = b.wait_for(2)[1]
    assert got.body == got_a.body and got.headers["X-Transq-Signature"] == got_a.headers["X-Transq-Signature"]
    assert not check(secret, got.headers, got.body, b.url, KEY_B)
    # each half counts: A's callback checked with B's URL and A's key, or A's URL and B's key
    assert not check(secret, got_a.headers, got_a.body, b.url, KEY_A)
    assert not check(secret, got_a.headers, got_a.body, a.url, KEY_B)
    # the deliverer's own verify agrees with the documented one
    stamp, signature = got_a.headers["X-Transq-Timestamp"], got_a.headers["X-Transq-Signature"]
    assert verify(SECRET, stamp, signature, got_a.body, a.url, KEY_A)
    assert not verify(SECRET, stamp, signature, got_a.body, b.url, KEY_B)

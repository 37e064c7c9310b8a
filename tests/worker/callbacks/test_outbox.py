"""The outbox in Redis: a job with a callback enters the due set in the very script that makes it final
(succeed, fail, cancel, a claim that finds its workers dead too often, a create that is final at once, a
rendered document); a deliverer's take leases an entry; a settlement after the lease moved on writes
nothing. Real Redis, the real store."""

from __future__ import annotations

import dataclasses
import time

from shared.store.callback_state import Delivery
from shared.store.document_store import DocumentStore
from shared.store.job_claims import Claimant
from shared.store.job_record import DocumentRecord
from shared.store.job_status import ClaimOutcome
from shared.store.jobs import JobStore, Translation
from shared.store.keys import Keys
from tests.worker.callbacks.conftest import ROUTE, claims_of, finished_job, queued_job
from worker.callbacks.outbox import Outbox

URL = "https://hooks.example.com/transq"


def due(store: JobStore) -> list[str]:
    return store.client.zrange(store.keys.callbacks_due, 0, -1)


def test_a_job_enters_the_due_set_when_it_becomes_final_and_not_before(store):
    job = queued_job(URL)
    store.create(job)
    claim = claims_of(store).claim(job.id, Claimant(ROUTE, "worker-1", 5, 3))
    assert due(store) == []
    assert store.get(job.id).callback == Delivery(state="pending", attempts=0, last_status=None, last_error=None)
    assert store.translated(job, claim.fence, Translation(["Hello."], sentences_done=1)) == "ok"
    assert due(store) == [job.id]
    record = store.client.hgetall(store.keys.job(job.id))
    assert record["callback_state"] == "pending" and record["callback_url"] == URL
    assert int(record["callback_since"]) <= time.time() + 1


def test_every_way_to_final_enters_it_once_and_a_job_without_a_callback_never(store, settings, redis_client):
    failed = finished_job(store, URL, outcome="fail")
    cancelled = queued_job(URL)
    store.create(cancelled)
    assert store.cancel(cancelled.id) == "ok"
    assert store.cancel(cancelled.id) == "refused"  # final already: not due twice
    cached = queued_job(URL, status="succeeded")  # every sentence cached: created final
    store.create(cached)
    plain = finished_job(store, "")
    # a job whose worker died: its lease lapsed, and the next claim finds its deliveries spent
    lost = queued_job(URL)
    store.create(lost)
    claims = claims_of(store)
    first = claims.claim(lost.id, Claimant(ROUTE, "worker-1", 5, 1))
    claims.drop_lease(lost.id, first.fence)
    assert claims.claim(lost.id, Claimant(ROUTE, "worker-2", 5, 1)).outcome == ClaimOutcome.LOST
    # a document job rendered by the document stage
    document = dataclasses.replace(queued_job(URL, status="parsing"), document=DocumentRecord("{}"))
    store.create(document)
    assert DocumentStore(redis_client, Keys(settings.key_prefix), settings).rendered(document, b"packed")
    assert sorted(due(store)) == sorted([failed.id, cancelled.id, cached.id, lost.id, document.id])
    assert plain.id not in due(store)
    assert store.get(plain.id).callback is None


def test_a_take_leases_entries_and_a_late_settlement_is_fenced(store, redis_client):
    job = finished_job(store, URL)
    outbox = Outbox(redis_client, store.keys)
    (attempt,) = outbox.take(10, lease_seconds=0.3)
    assert attempt.job_id == job.id and attempt.number == 1
    assert outbox.take(10, lease_seconds=0.3) == []  # leased: nobody else sends it now
    time.sleep(0.4)
    (again,) = outbox.take(10, lease_seconds=30)  # the first deliverer died: its lease ended
    assert again.number == 2
    assert outbox.delivered(attempt, 200) == ""  # the first one's late answer writes nothing
    assert outbox.retry(again, 0.0, 60, "the receiver answered HTTP 500", 500) == "pending"
    (third,) = outbox.take(10, lease_seconds=30)
    assert outbox.delivered(third, 204) == "delivered"
    assert due(store) == [] and outbox.take(10, 30) == []
    assert store.get(job.id).callback == Delivery(state="delivered", attempts=3, last_status=204, last_error=None)


def test_a_retry_past_the_deadline_fails_and_an_expired_job_leaves_the_outbox(store, redis_client):
    outbox = Outbox(redis_client, store.keys)
    job = finished_job(store, URL)
    (attempt,) = outbox.take(10, 30)
    assert outbox.retry(attempt, 5.0, 2, "timed out", None) == "failed"
    assert store.get(job.id).callback.state == "failed" and due(store) == []
    gone = finished_job(store, URL)
    redis_client.delete(store.keys.job(gone.id))
    assert outbox.take(10, 30) == [] and due(store) == []

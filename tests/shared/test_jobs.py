"""The job store against a real Redis: transitions only move forward, atomically."""

import threading
import time

import pytest

from shared.errors import ErrorCode
from shared.store.job_claims import Claimant, JobClaims, Progress
from shared.store.job_record import Job, is_job_id, new_job_id, utc_now
from shared.store.job_status import JobStatus
from shared.store.jobs import Idempotency, JobStore, Translation
from shared.store.keys import Keys

ROUTE = "zh-en-0123456789"


@pytest.fixture
def store(redis_client):
    return JobStore(redis_client, Keys(), job_ttl=100, result_ttl=50)


@pytest.fixture
def claims(redis_client):
    return JobClaims(redis_client, Keys(), job_ttl=100, result_ttl=50)


def new_job(text: str = "你好。") -> Job:
    return Job(
        id=new_job_id(),
        status=JobStatus.QUEUED,
        texts=[text],
        model="m",
        created_at=utc_now(),
        sentences_total=1,
        route=ROUTE,
    )


def make_job(store: JobStore) -> Job:
    job = new_job()
    store.create(job)
    return job


def test_ids_are_128_random_bits_and_nothing_else_passes_for_one():
    ids = {new_job_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) == 32 and is_job_id(i) for i in ids)
    for other in ("0" * 31, "0" * 33, "A" * 32, "0" * 32 + "\n", "../" + "0" * 29, None, 12345):
        assert not is_job_id(other), other


def test_lifecycle_and_ttls(store, redis_client, claims):
    job = make_job(store)
    assert redis_client.ttl(Keys().job(job.id)) == 100
    assert store.pending_count(ROUTE) == 1
    claim = claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3))
    assert (claim.outcome, claim.fence) == ("claimed", 1)
    assert store.get(job.id).status == "running"
    assert store.pending_count(ROUTE) == 0
    assert claims.set_progress(job.id, claim.fence, Progress(1)) == "ok"
    assert store.translated(job, claim.fence, Translation(["Hello."], sentences_done=1, cached_sentences=0)) == "ok"
    done = store.get(job.id)
    assert done.status == "succeeded" and done.result == ["Hello."] and done.finished_at
    assert 0 < redis_client.ttl(Keys().job(job.id)) <= 50
    assert not redis_client.exists(Keys().lease(job.id))


def test_status_never_moves_backwards(store, claims):
    job = make_job(store)
    fence = claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3)).fence
    assert store.translated(job, fence, Translation(["a"], 1, 0)) == "ok"
    assert store.fail(job.id, ErrorCode.INTERNAL_ERROR, "y", fence) == "refused"
    assert store.cancel(job.id) == "refused"
    assert claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3)).outcome == "final"
    assert store.translated(job, fence, Translation(["b"], 1, 0)) == "refused"
    assert store.get(job.id).result == ["a"]


def test_cancel_queued_then_worker_skips_it(store, claims):
    job = make_job(store)
    assert store.cancel(job.id) == "ok"
    assert claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3)).outcome == "final"
    assert store.pending_count(ROUTE) == 0


def test_lease_blocks_second_worker_until_it_expires(store, redis_client, claims):
    job = make_job(store)
    assert claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3)).outcome == "claimed"
    assert claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3)).outcome == "leased"
    redis_client.delete(Keys().lease(job.id))  # the worker died: nobody renews the lease
    claim = claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3))
    assert (claim.outcome, claim.attempts) == ("claimed", 2)


def test_lost_deliveries_fail_the_job(store, claims):
    job = make_job(store)
    for attempt in range(3):
        assert claims.claim(job.id, Claimant(ROUTE, f"w{attempt}", 5, 3)).outcome == "claimed"
        store.client.delete(Keys().lease(job.id))
    claim = claims.claim(job.id, Claimant(ROUTE, "w9", 5, 3))
    assert claim.outcome == "lost"
    failed = store.get(job.id)
    assert failed.status == "failed" and failed.error["code"] == "worker_lost"


def test_a_parked_job_waits_again_and_its_next_claim_counts_no_attempt(store, redis_client, claims):
    job = make_job(store)
    fence = claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3)).fence
    claims.set_progress(job.id, fence, Progress(1, 0, {0: "half"}))
    assert claims.park(job.id, ROUTE, "w2", fence) is False  # not w2's to give back
    assert claims.park(job.id, ROUTE, "w1", fence) is True
    assert claims.oldest_pending(ROUTE, 5) == [job.id] and store.get(job.id).status == "running"
    assert claims.renew_leases({job.id: fence}, "w1", 5) == 0  # its old holder does not take it back
    again = claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3), fresh_only=True)  # rounds may take it in
    assert (again.outcome, again.fence) == ("claimed", fence + 1)
    assert store.get(job.id).attempts == 1 and claims.partial_translations([job.id]) == [{0: "half"}]
    store.translated(job, again.fence, Translation(["done"], 1, 0))
    assert not redis_client.exists(Keys().partial(job.id))  # kept only while it runs


def test_a_lapsed_lease_counts_as_lost_only_when_the_claimant_saw_no_outage(store, claims):
    job = make_job(store)
    fence = claims.claim(job.id, Claimant(ROUTE, "w1", 0.05, 3)).fence
    time.sleep(0.1)  # the lease lapsed (a broker freeze, or w1 died)
    assert claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3, lapse_is_loss=False)).outcome == "leased"
    assert claims.renew_leases({job.id: fence}, "w1", 5) == 1  # w1 is alive: it takes its lease back
    assert claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3)).outcome == "leased"
    claims.drop_lease(job.id, fence)
    assert claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3)).attempts == 2


def test_a_stale_claim_s_writes_are_refused_and_the_live_claim_s_result_stands(store, redis_client, claims):
    """Fencing: w1 stalls past its lease, w2 claims the job; w1's late writes, in any order, change nothing."""
    job = make_job(store)
    old = claims.claim(job.id, Claimant(ROUTE, "w1", 0.05, 3))
    time.sleep(0.1)  # w1 stalled (stopped, cut off) past its lease
    new = claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3))
    assert (new.outcome, new.attempts, new.fence) == ("claimed", 2, old.fence + 1)
    assert claims.renew_leases({job.id: old.fence}, "w1", 5) == 0  # w1 does not take the lease back
    assert redis_client.get(Keys().lease(job.id)) == "w2"
    assert claims.set_progress(job.id, old.fence, Progress(1, 0, {0: "stale"})) == "fenced"
    assert claims.park(job.id, ROUTE, "w1", old.fence) is False
    claims.drop_lease(job.id, old.fence)
    assert redis_client.get(Keys().lease(job.id)) == "w2"  # w2's lease stays
    assert store.translated(job, old.fence, Translation(["stale"], 1, 0)) == "fenced"
    assert store.fail(job.id, ErrorCode.INTERNAL_ERROR, "m", old.fence) == "fenced"
    assert store.get(job.id).status == "running" and claims.partial_translations([job.id]) == [{}]
    assert claims.set_progress(job.id, new.fence, Progress(1, 0, {0: "live"})) == "ok"
    assert store.translated(job, new.fence, Translation(["live"], 1, 0)) == "ok"
    assert store.translated(job, old.fence, Translation(["stale"], 1, 0)) == "fenced"  # after the live result, too
    assert store.get(job.id).result == ["live"]


def test_running_jobs_whose_lease_lapsed_are_found_once_per_claim(store, redis_client, claims):
    alive, dead, done = make_job(store), make_job(store), make_job(store)
    fences = {j.id: claims.claim(j.id, Claimant(ROUTE, "w1", 0.2, 3)).fence for j in (alive, dead, done)}
    store.translated(done, fences[done.id], Translation(["x"], 1, 0))
    assert claims.lapsed(ROUTE, 16) == []  # nothing lapsed yet
    deadline = time.monotonic() + 1
    while time.monotonic() < deadline:
        claims.renew_leases({alive.id: fences[alive.id]}, "w1", 0.2)  # alive renews, dead does not
        time.sleep(0.05)
    assert claims.lapsed(ROUTE, 16) == [dead.id]
    assert redis_client.zscore(Keys().running(ROUTE), done.id) is None  # finished: out of the set
    assert claims.claim(dead.id, Claimant(ROUTE, "w2", 5, 3)).outcome == "claimed"
    assert claims.lapsed(ROUTE, 16) == []  # claimed again: its new lease runs


def test_create_checks_the_queue_cap_and_the_idempotency_key_in_one_step(store, redis_client):
    first = make_job(store)
    second = new_job("再见。")
    assert store.create(second, max_queue=1).outcome == "overloaded"
    assert not redis_client.exists(Keys().job(second.id))
    idem = Idempotency(Keys().idempotency("k"), "digest-a", 60)
    assert store.create(second, idempotency=idem, max_queue=2).outcome == "created"
    third = new_job("再见。")
    again = store.create(third, idempotency=idem, max_queue=0)
    assert (again.outcome, again.job_id, again.request_digest) == ("exists", second.id, "digest-a")
    assert not redis_client.exists(Keys().job(third.id)) and store.pending_count(ROUTE) == 2
    assert first.id != second.id


def test_a_create_that_runs_after_its_job_was_taken_back_writes_nothing(store, redis_client):
    """The API takes a job back when its create failed mid-way (api.acceptance); a create still queued in a
    primary that froze can run after that take-back, on another connection: the tombstone makes it write
    nothing (no record, no pending entry, no idempotency key), for the job's TTL."""
    job = new_job()
    idem = Idempotency(Keys().idempotency("late"), "digest-a", 60)
    store.delete(job, idem.key)  # the take-back reached the primary first
    late = store.create(job, idempotency=idem)
    assert late.outcome == "taken_back"
    assert not redis_client.exists(Keys().job(job.id)) and store.pending_count(ROUTE) == 0
    assert not redis_client.exists(idem.key) and not redis_client.exists(Keys().events(job.id))
    assert 0 < redis_client.ttl(Keys().taken_back(job.id)) <= 100
    retried = new_job()  # the client's retry (same Idempotency-Key) makes a new job: it is created
    assert store.create(retried, idempotency=idem).outcome == "created"


def test_concurrent_writers_cannot_regress(store, claims):
    job = make_job(store)
    fence = claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3)).fence
    outcomes = []

    def write(kind: str) -> None:
        if kind == "ok":
            outcomes.append(store.translated(job, fence, Translation(["x"], 1, 0)))
        else:
            outcomes.append(store.fail(job.id, ErrorCode.INTERNAL_ERROR, "m", fence))

    threads = [threading.Thread(target=write, args=("ok" if i % 2 else "fail",)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 1
    assert store.get(job.id).status in ("succeeded", "failed")


def test_progress_never_recreates_an_expired_job(redis_client, claims):
    assert claims.set_progress("0" * 32, 1, Progress(3)) == "fenced"  # no record, no fence to match
    assert not redis_client.exists(Keys().job("0" * 32))


def test_get_many_reads_each_job_or_none(store):
    first, second = make_job(store), make_job(store)
    read = store.get_many([first.id, "0" * 32, second.id])
    assert read[1] is None and [read[0].id, read[2].id] == [first.id, second.id]


def test_job_ids_are_recognised_and_nothing_else_is():
    assert is_job_id(new_job_id())
    assert not any(is_job_id(v) for v in ("0" * 31, "0" * 33, "G" * 32, "A" * 32, 7, None, ["0" * 32], "0" * 32 + "\n"))


def test_progress_records_its_counts_and_new_warnings_in_the_record(store, claims):
    job = make_job(store)
    fence = claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3)).fence
    warned = [{"sentence": 0, "kind": "repeats"}]
    assert claims.set_progress(job.id, fence, Progress(2, 1, {0: "a", 1: "b"}, warnings=warned)) == "ok"
    assert claims.set_progress(job.id, fence, Progress(3, 1, {2: "c"})) == "ok"  # warnings unchanged
    running = store.get(job.id)
    assert (running.sentences_done, running.cached_sentences, running.warnings) == (3, 1, warned)
    assert claims.partial_translations([job.id]) == [{0: "a", 1: "b", 2: "c"}]

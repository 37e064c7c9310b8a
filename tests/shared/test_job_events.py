"""A job's events against a real Redis: each script that records sentences or moves the job appends its events
in the same call, a refused write appends none, the stream is bounded and expires with the job; a client's
stream slots."""

import json
import time

import pytest

from shared.store.job_claims import Claimant, JobClaims, Progress
from shared.store.job_events import JobEvents, Sentences, is_event_id
from shared.store.job_record import Job, new_job_id, utc_now
from shared.store.job_status import JobStatus
from shared.store.jobs import JobStore, Translation
from shared.store.keys import Keys

ROUTE = "zh-en-0123456789"


@pytest.fixture
def store(redis_client):
    return JobStore(redis_client, Keys(), job_ttl=100, result_ttl=50)


@pytest.fixture
def claims(redis_client):
    return JobClaims(redis_client, Keys(), job_ttl=100, result_ttl=50)


@pytest.fixture
def events(redis_client):
    return JobEvents(redis_client, Keys())


def new_job(total: int = 3) -> Job:
    return Job(
        id=new_job_id(),
        status=JobStatus.QUEUED,
        texts=["一。" * total],
        model="m",
        created_at=utc_now(),
        sentences_total=total,
        route=ROUTE,
        want_scores=True,
    )


def kinds(events: JobEvents, job_id: str) -> list[tuple[str, dict]]:
    return [(e.kind, json.loads(e.data)) for e in events.read(job_id, "0", 0, count=1000)]


def test_a_job_s_life_is_its_events_in_order_each_written_with_what_it_announces(store, claims, events, redis_client):
    job = new_job(3)
    job.sentences_done = job.cached_sentences = 1
    store.create(job, cached=Sentences({0: "One."}, {0: -0.5}))
    assert redis_client.hgetall(Keys().partial(job.id)) == {"0": "One.", "s0": "-0.5"}  # as a worker records it
    claim = claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3))
    claims.set_progress(job.id, claim.fence, Progress(2, 1, {1: "Two."}, {1: -0.25}))
    last = Sentences({2: "Three."}, {})
    store.translated(job, claim.fence, Translation(["One.Two.Three."], 3, 1), last)
    assert kinds(events, job.id) == [
        ("sentence", {"index": 0, "translation": "One.", "score": -0.5}),
        ("progress", {"status": "queued", "sentences_done": 1, "sentences_total": 3}),
        ("progress", {"status": "running", "sentences_done": 1, "sentences_total": 3}),
        ("sentence", {"index": 1, "translation": "Two.", "score": -0.25}),
        ("progress", {"status": "running", "sentences_done": 2, "sentences_total": 3}),
        ("sentence", {"index": 2, "translation": "Three."}),
        ("progress", {"status": "succeeded", "sentences_done": 3, "sentences_total": 3}),
    ]
    stream_ttl, job_ttl = redis_client.ttl(Keys().events(job.id)), redis_client.ttl(Keys().job(job.id))
    assert 0 < stream_ttl <= job_ttl <= 50  # it goes with the finished job


def test_a_refused_write_announces_nothing(store, claims, events):
    job = new_job(2)
    store.create(job)
    stale = claims.claim(job.id, Claimant(ROUTE, "w1", 0.05, 3))
    time.sleep(0.1)
    live = claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3))  # a takeover: its own progress event
    before = kinds(events, job.id)
    assert [k for k, _ in before] == ["progress", "progress", "progress"]
    assert claims.set_progress(job.id, stale.fence, Progress(1, 0, {0: "late"})) == "fenced"
    assert store.translated(job, stale.fence, Translation(["x"], 2), Sentences({0: "a", 1: "b"})) == "fenced"
    assert kinds(events, job.id) == before
    store.cancel(job.id)
    assert store.cancel(job.id) == "refused"
    assert [d["status"] for _, d in kinds(events, job.id)[3:]] == ["cancelled"]
    assert live.fence == 2


def test_a_fully_cached_job_s_sentences_are_events_and_no_partial_hash_is_left(store, events, redis_client):
    job = new_job(2)
    job.status, job.result = JobStatus.SUCCEEDED, ["One.Two."]
    store.create(job, cached=Sentences({0: "One.", 1: "Two."}))
    assert [k for k, _ in kinds(events, job.id)] == ["sentence", "sentence", "progress"]
    assert not redis_client.exists(Keys().partial(job.id))


def test_the_stream_is_bounded_by_the_job_s_sentences_and_forgotten_with_the_job(store, claims, events, redis_client):
    job = new_job(1)
    store.create(job)
    claim = claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3))
    for n in range(60):  # far more recordings than a job of one sentence makes
        claims.set_progress(job.id, claim.fence, Progress(1, 0, {0: f"t{n}"}))
    assert redis_client.xlen(Keys().events(job.id)) == 2 * 1 + 32
    store.delete(job)
    assert not redis_client.exists(Keys().events(job.id))


def test_reads_resume_after_an_id_and_ids_are_checked(store, events):
    job = new_job(1)
    store.create(job, cached=Sentences({0: "One."}))
    first, second = events.read(job.id, "0", 0)
    assert is_event_id(first.id) and events.read(job.id, first.id, 0) == [second]
    assert events.read(job.id, second.id, 0) == []
    for bogus in ("", "abc", "1-2-3", "-1-0", "1" * 21 + "-0", "1-0\n"):
        assert not is_event_id(bogus), bogus


def test_a_client_s_stream_slots_are_limited_freed_and_lapse(events):
    assert all(events.take_slot("key:a", f"s{n}", 10_000, 3) for n in range(3))
    assert not events.take_slot("key:a", "s3", 10_000, 3)
    assert events.take_slot("key:b", "s0", 10_000, 3)  # another client's are its own
    assert events.take_slot("key:a", "s0", 10_000, 3)  # a refresh of one it holds
    events.free_slot("key:a", "s1")
    assert events.take_slot("key:a", "s3", 10_000, 3)
    assert events.take_slot("key:c", "old", 50, 1)
    time.sleep(0.1)
    assert events.take_slot("key:c", "new", 50, 1)  # the first holder's process died: its slot lapsed

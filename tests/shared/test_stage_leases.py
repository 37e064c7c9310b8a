"""The document stage's leases and fences against a real Redis: a take holds the job for its lease, a lapsed
lease lets the next stage take it over (a lost delivery) and fences the old stage's writes out, the take after
TRANSQ_MAX_DELIVERIES lost ones says `lost`, and the sweep finds lapsed jobs only."""

import time

import pytest

from shared.errors import ErrorCode
from shared.store.document_store import DocumentStore
from shared.store.job_record import DocumentRecord, Job, new_job_id, utc_now
from shared.store.job_status import JobStatus, Move
from shared.store.jobs import JobStore, Translation
from shared.store.keys import Keys
from shared.store.stage_leases import StageLeases
from tests.stack import stack_settings

KEYS = Keys()


@pytest.fixture
def parts(redis_server, redis_client, tmp_path):
    settings = stack_settings(redis_server.url, tmp_path / "no-model")
    return (
        JobStore(redis_client, KEYS, 100, 50),
        StageLeases(redis_client, KEYS),
        DocumentStore(redis_client, KEYS, settings),
    )


def document_job(store: JobStore) -> Job:
    job = Job(id=new_job_id(), status=JobStatus.PARSING, texts=[], model="m", created_at=utc_now(), sentences_total=0)
    job.document = DocumentRecord('{"format": "markdown"}', "a.md")
    job.format, job.route = "markdown", "r"
    store.create(job, document_source=b"packed", document_ttl=100)
    return job


def lapse(redis_client, job_id: str) -> None:
    redis_client.delete(KEYS.stage_lease(job_id))


def parsed(documents: DocumentStore, store: JobStore, job_id: str, fence: int | None) -> bool:
    job = store.get(job_id)
    job.texts, job.sentences_total = ["你好。"], 1
    return documents.parsed(job, fence)


def test_a_take_holds_the_job_and_a_lapsed_lease_is_taken_over_with_a_new_fence(parts, redis_client):
    store, leases, documents = parts
    job = document_job(store)
    first = leases.take(job.id, "h:1:2:a", 5, max_deliveries=3)
    assert (first.outcome, first.attempts, first.fence) == ("taken", 1, 1)
    assert leases.take(job.id, "h:1:3:b", 5, 3).outcome == "leased"
    assert leases.holder(job.id) == ("h:1:2:a", 1, "parsing")
    assert leases.renew(job.id, "h:1:2:a", first.fence, 5)
    assert not leases.renew(job.id, "h:1:3:b", first.fence, 5)  # not its lease
    lapse(redis_client, job.id)
    second = leases.take(job.id, "h:1:3:b", 5, 3)
    assert (second.outcome, second.attempts, second.fence) == ("taken", 2, 2)
    assert not leases.renew(job.id, "h:1:2:a", first.fence, 5)  # fenced out
    assert not parsed(documents, store, job.id, first.fence)  # the old stage's late parse is refused
    assert store.fail(job.id, ErrorCode.INTERNAL_ERROR, "late", first.fence) == Move.FENCED
    assert not leases.release(job.id, "h:1:2:a", first.fence)  # leaves the new take's lease and entry
    assert redis_client.get(KEYS.stage_lease(job.id)) == "h:1:3:b"
    assert redis_client.zscore(KEYS.staged, job.id) is not None
    assert parsed(documents, store, job.id, second.fence)
    assert store.get(job.id).status == JobStatus.QUEUED
    assert leases.release(job.id, "h:1:3:b", second.fence)
    assert redis_client.get(KEYS.stage_lease(job.id)) is None
    assert redis_client.zscore(KEYS.staged, job.id) is None
    assert leases.take(job.id, "h:1:3:b", 5, 3).outcome == "final"  # a stale copy of its message


def test_a_renewal_takes_back_a_lease_that_lapsed_while_nobody_took_the_job(parts, redis_client):
    store, leases, _ = parts
    job = document_job(store)
    taken = leases.take(job.id, "h:1:2:a", 5, 3)
    lapse(redis_client, job.id)  # a broker restart, a freeze
    assert leases.renew(job.id, "h:1:2:a", taken.fence, 5)
    assert redis_client.get(KEYS.stage_lease(job.id)) == "h:1:2:a"


def test_the_take_after_max_deliveries_lost_ones_is_lost_and_fences_the_last_holder_out(parts, redis_client):
    store, leases, documents = parts
    job = document_job(store)
    takes = []
    for holder in ("a", "b", "c"):
        takes.append(leases.take(job.id, f"h:1:2:{holder}", 5, max_deliveries=2))
        lapse(redis_client, job.id)
    assert [(t.outcome, t.attempts) for t in takes] == [("taken", 1), ("taken", 2), ("lost", 3)]
    assert not parsed(documents, store, job.id, takes[1].fence)  # the last holder, stalled, comes back
    assert store.fail(job.id, ErrorCode.WORKER_LOST, "lost", takes[2].fence) == Move.OK
    assert redis_client.zscore(KEYS.staged, job.id) is None


def test_a_retried_take_does_not_count_and_a_phase_starts_its_own_count(parts, redis_client):
    store, leases, documents = parts
    job = document_job(store)
    first = leases.take(job.id, "h:1:2:a", 5, 1)
    assert leases.release(job.id, "h:1:2:a", first.fence, counted=False)  # a broker outage: the task is retried
    again = leases.take(job.id, "h:1:2:a", 5, 1)
    assert (again.outcome, again.attempts) == ("taken", 1)
    assert parsed(documents, store, job.id, again.fence)  # its lease is left behind (the stage died before release)
    translated = Translation(result=["Hello."], sentences_done=1)
    assert store.translated(store.get(job.id), None, translated) == Move.OK  # rendering
    render = leases.take(job.id, "h:1:9:z", 5, 1)  # the parse's lease does not hold the render
    assert (render.outcome, render.attempts, render.fence) == ("taken", 1, again.fence + 1)
    assert documents.rendered(store.get(job.id), b"out", render.fence)
    assert store.get(job.id).status == JobStatus.SUCCEEDED


def test_the_sweep_finds_only_lapsed_jobs_still_waiting_for_the_stage(parts, redis_client):
    store, leases, documents = parts
    held, lapsed, done = (document_job(store) for _ in range(3))
    fences = {job.id: leases.take(job.id, "h:1:2:a", 0.2, 3).fence for job in (held, lapsed, done)}
    assert leases.renew(held.id, "h:1:2:a", fences[held.id], 30)
    assert parsed(documents, store, done.id, fences[done.id])
    time.sleep(0.3)
    assert leases.lapsed(10) == [lapsed.id]
    assert redis_client.zcard(KEYS.staged) == 2  # the parsed job left; the renewed one was moved on
    assert leases.mark_woken(lapsed.id, 5) and not leases.mark_woken(lapsed.id, 5)
    assert leases.take(lapsed.id, "h:1:3:b", 5, 3).outcome == "taken"
    assert leases.mark_woken(lapsed.id, 5)  # the take let the wake key go

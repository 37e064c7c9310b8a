"""Each client's storage in the broker, accounted by the job store's scripts against a real Redis: charged
when a job and its document are stored, refused over the limit (nothing written), shrunk when the job
finishes, released when the data expires or the job is forgotten."""

import time

from shared.errors import ErrorCode
from shared.store.job_record import DocumentRecord, Job, new_job_id, utc_now
from shared.store.job_status import JobStatus
from shared.store.jobs import Idempotency, JobStore, Translation, Usage
from shared.store.keys import Keys

ROUTE = "zh-en-0123456789"
KEYS = Keys()


def job(texts: list[str], status: str = JobStatus.QUEUED) -> Job:
    return Job(
        id=new_job_id(), status=status, texts=texts, model="m", created_at=utc_now(), sentences_total=1, route=ROUTE
    )


def held(redis_client, client: str) -> int:
    return int(redis_client.get(KEYS.usage(client) + ":bytes") or 0)


def test_a_client_is_charged_refused_over_its_limit_and_another_is_not(redis_client):
    store = JobStore(redis_client, KEYS, job_ttl=100, result_ttl=50)
    mine, other = Usage(KEYS.usage("addr:1"), 50_000), Usage(KEYS.usage("addr:2"), 50_000)
    first = job(["字" * 10_000])  # 30 KB of UTF-8
    assert store.create(first, usage=mine).outcome == "created"
    assert 30_000 < held(redis_client, "addr:1") < 31_000
    refused = store.create(job(["字" * 10_000]), usage=mine)
    assert refused.outcome == "over_quota" and refused.held_bytes == held(redis_client, "addr:1")
    assert 0 < refused.retry_after <= 100
    assert store.create(job(["字" * 10_000]), usage=other).outcome == "created"
    assert redis_client.zcard(KEYS.pending(ROUTE)) == 2  # the refused job wrote nothing


def test_a_document_is_charged_and_what_a_finished_job_no_longer_holds_is_released(redis_client):
    store = JobStore(redis_client, KEYS, job_ttl=100, result_ttl=50)
    usage = Usage(KEYS.usage("key:a"), 0)
    document = job([], status=JobStatus.PARSING)
    document.document = DocumentRecord('{"format": "markdown"}', "a.md")
    store.create(document, usage=usage, document_source=b"x" * 20_000, document_ttl=30)
    assert redis_client.ttl(KEYS.document_source(document.id)) == 30
    assert 20_000 < held(redis_client, "key:a") < 21_000
    store.fail(document.id, ErrorCode.INVALID_DOCUMENT, "bad")
    assert redis_client.exists(KEYS.document_source(document.id)) == 0
    assert held(redis_client, "key:a") < 1_000  # only the small failed record is left
    plain = job(["字" * 10_000])
    store.create(plain, usage=usage)
    store.translated(plain, None, Translation(["short"], 1, 0))
    assert "texts" not in redis_client.hgetall(KEYS.job(plain.id))
    assert held(redis_client, "key:a") < 2_000


def test_expired_and_forgotten_data_is_released(redis_client):
    store = JobStore(redis_client, KEYS, job_ttl=1, result_ttl=1)
    usage = Usage(KEYS.usage("addr:3"), 25_000)
    forgotten = job(["字" * 5_000])
    store.create(forgotten, usage=usage)
    store.delete(forgotten)
    assert held(redis_client, "addr:3") == 0 and redis_client.exists(KEYS.job(forgotten.id)) == 0
    store.create(job(["字" * 5_000]), usage=usage)
    assert store.create(job(["字" * 5_000]), usage=usage).outcome == "over_quota"
    time.sleep(2.1)  # the records expire; their entries go on the client's next submission
    assert store.create(job(["字" * 5_000]), usage=usage).outcome == "created"
    assert 15_000 < held(redis_client, "addr:3") < 16_000


def test_the_scripts_take_each_value_as_an_argument_of_its_own(redis_client):
    """No script splits a packed argument: keys with a space in them (a prefix Settings now refuses, which
    once silently turned the storage accounting off) are accounted, and an idempotency key answers its job."""
    keys = Keys("transq test: ")
    store = JobStore(redis_client, keys, job_ttl=100, result_ttl=50)
    usage = Usage(keys.usage("addr:4"), 25_000)
    idempotency = Idempotency(keys.idempotency("k"), "digest", 60)
    first = job(["字" * 5_000])
    assert store.create(first, idempotency=idempotency, usage=usage).outcome == "created"
    assert 15_000 < int(redis_client.get(usage.key + ":bytes")) < 16_000
    again = store.create(job(["字" * 5_000]), idempotency=idempotency, usage=usage)
    assert (again.outcome, again.job_id, again.request_digest) == ("exists", first.id, "digest")
    refused = store.create(job(["字" * 5_000]), usage=usage)
    assert refused.outcome == "over_quota" and refused.held_bytes == int(redis_client.get(usage.key + ":bytes"))
    assert redis_client.zcard(keys.pending(ROUTE)) == 1


def test_a_jobs_glossary_counts_in_what_it_holds_until_it_is_done(redis_client):
    """Issue 31: a job's inline glossary was written with its record but not counted (12 jobs held 6.8 MiB
    while the counter said 3 KB)."""
    store = JobStore(redis_client, KEYS, job_ttl=100, result_ttl=50)
    usage = Usage(KEYS.usage("addr:5"), 100_000)
    glossaried = job(["你好。"])
    glossaried.glossary = {f"术语{i:03d}" + "字" * 40: "term" * 10 for i in range(200)}  # about 37 KB
    assert store.create(glossaried, usage=usage).outcome == "created"
    assert held(redis_client, "addr:5") > 30_000
    second = job(["你好。"])
    second.glossary = glossaried.glossary
    assert store.create(second, usage=usage).outcome == "created"
    assert store.create(job(["字" * 10_000]), usage=usage).outcome == "over_quota"
    store.translated(glossaried, None, Translation(["hello"], 1, 0))  # a done job's glossary goes
    assert 35_000 < held(redis_client, "addr:5") < 45_000

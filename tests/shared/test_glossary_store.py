"""Stored glossaries against a real Redis (issue 31): each lives TRANSQ_GLOSSARY_TTL seconds from when it was
stored or last read, counts against its owner's storage (TRANSQ_CLIENT_STORAGE_BYTES, the account its jobs
count in) until it expires or is deleted, and an expired one frees its place under TRANSQ_GLOSSARY_MAX_STORED."""

import time

from shared.settings import Settings
from shared.store.glossary_store import GlossaryRefused, GlossaryStore, StoredGlossary
from shared.store.jobs import JobStore, Usage
from shared.store.keys import Keys
from shared.text.glossary import Glossary
from tests.shared.test_usage import held, job

KEYS = Keys()


def store(redis_client, **settings) -> GlossaryStore:
    return GlossaryStore(redis_client, KEYS, Settings(**settings))


def terms(tag: str, count: int = 20) -> Glossary:
    return Glossary.of({f"{tag}{i:03d}" + "字" * 30: "term" * 10 for i in range(count)})  # about 3 KB


def test_a_stored_glossary_expires_and_counts_in_its_owners_storage(redis_client):
    glossaries = store(redis_client, glossary_ttl=100, client_storage_bytes=10_000)
    first = glossaries.create("addr:1", "one", terms("a"))
    assert isinstance(first, StoredGlossary)
    assert 95 <= redis_client.ttl(KEYS.glossary("addr:1", first.id)) <= 100
    size = held(redis_client, "addr:1")
    assert 2_500 < size < 4_000
    assert isinstance(glossaries.create("addr:1", "two", terms("b")), StoredGlossary)
    refused = glossaries.create("addr:1", "three", terms("c" * 20, 60))  # 9 KB more: over 10,000
    assert isinstance(refused, GlossaryRefused) and refused.reason == "over_quota"
    assert refused.held == held(redis_client, "addr:1") and 0 < refused.retry_after <= 100
    assert [g.name for g in glossaries.list("addr:1")] == ["one", "two"]
    assert isinstance(glossaries.create("addr:2", "theirs", terms("c")), StoredGlossary)  # another owner
    # Its jobs count in the same account: one the glossaries leave no room for is refused.
    jobs = JobStore(redis_client, KEYS, job_ttl=100, result_ttl=50)
    assert jobs.create(job(["字" * 2_000]), usage=Usage(KEYS.usage("addr:1"), 10_000)).outcome == "over_quota"
    assert glossaries.delete("addr:1", first.id)
    assert held(redis_client, "addr:1") == size  # the second, of the same size, is left
    assert not glossaries.delete("addr:1", first.id)


def test_reading_a_glossary_renews_it(redis_client):
    glossaries = store(redis_client, glossary_ttl=100, client_storage_bytes=10_000)
    stored = glossaries.create("key:a", "one", terms("a"))
    record = KEYS.glossary("key:a", stored.id)
    redis_client.expire(record, 5)
    found = glossaries.get("key:a", stored.id)
    assert found is not None and found.glossary.digest == stored.glossary.digest
    assert 95 <= redis_client.ttl(record) <= 100
    (member, expiry), *_ = redis_client.zrange(KEYS.usage("key:a"), 0, -1, withscores=True)
    assert member.startswith(f"{stored.id}:g:") and expiry > time.time() + 90
    assert glossaries.get("key:b", stored.id) is None  # another owner's id is nothing


def test_an_expired_glossary_frees_its_place_and_its_bytes(redis_client):
    glossaries = store(redis_client, glossary_ttl=1, glossary_max_stored=2, client_storage_bytes=10_000)
    assert isinstance(glossaries.create("addr:3", "one", terms("a")), StoredGlossary)
    assert isinstance(glossaries.create("addr:3", "two", terms("b")), StoredGlossary)
    full = glossaries.create("addr:3", "three", terms("c"))
    assert isinstance(full, GlossaryRefused) and full.reason == "full"
    time.sleep(2.1)
    assert glossaries.list("addr:3") == []
    third = glossaries.create("addr:3", "three", terms("c"))
    assert isinstance(third, StoredGlossary)
    assert [g.name for g in glossaries.list("addr:3")] == ["three"]
    assert held(redis_client, "addr:3") < 4_000  # only the third is held


def test_without_a_storage_limit_nothing_is_accounted(redis_client):
    glossaries = store(redis_client, glossary_ttl=100, client_storage_bytes=0)
    stored = glossaries.create("addr:4", "one", terms("a"))
    assert isinstance(stored, StoredGlossary) and glossaries.get("addr:4", stored.id) is not None
    assert held(redis_client, "addr:4") == 0 and redis_client.ttl(KEYS.glossary("addr:4", stored.id)) > 0

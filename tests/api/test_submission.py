"""submit() against a real Redis and a real Celery producer: the job record, its message, the cache fast path,
idempotency, backpressure, the storage quota, and a broker that refuses the message."""

import dataclasses

import pytest

from api.submission import submit
from api.validation import parse_translation_request
from shared.celery_factory import make_celery
from shared.errors import IdempotencyMismatch, Overloaded, StorageQuotaExceeded, Unavailable
from shared.routing.routes import route_for
from shared.store.backends import Services
from shared.store.job_status import JobStatus
from shared.store.sentence_cache import normalise
from shared.text.splitter import spans_of, split_text
from tests.stack import stack_settings


@pytest.fixture
def settings(redis_server, tmp_path):
    return stack_settings(redis_server.url, tmp_path / "no-model")


def services_with(settings, **overrides):
    return Services.start(dataclasses.replace(settings, **overrides))


def request(settings, **body):
    return parse_translation_request(body, settings)


def queued_messages(services) -> int:
    return services.redis.llen(services.keys.queue(route_for(services.settings).key))


def test_a_job_is_stored_queued_and_its_message_sent_to_its_route(settings):
    services = Services.start(settings)
    job = submit(services, request(settings, texts=["你好。再见。", "谢谢。"]), owner="someone")
    assert job.status == JobStatus.QUEUED
    stored = services.store.get(job.id)
    assert stored.status == JobStatus.QUEUED and stored.texts == ["你好。再见。", "谢谢。"]
    assert (stored.sentences_total, stored.sentences_done, stored.owner) == (3, 0, "someone")
    assert stored.route == route_for(settings).key
    # the one split, stored for the worker: each text's segments at their offsets
    assert stored.spans == [spans_of(t, split_text(t, settings.max_sentence_chars)) for t in stored.texts]
    assert queued_messages(services) == 1
    assert services.stats.read()[0]["jobs_submitted"] == 1


def test_a_job_whose_every_sentence_is_cached_succeeds_at_once_and_sends_nothing(settings):
    services = Services.start(settings)
    route = route_for(settings)
    services.registry.beat("w1", {}, route, "ns")  # a worker publishes its cache namespace
    services.cache.put_many("ns", {normalise("你好。"): "Hello.", normalise("再见。"): "Goodbye."})
    job = submit(services, request(settings, text="你好。再见。"))
    assert job.status == JobStatus.SUCCEEDED and job.result == ["Hello. Goodbye."]
    stored = services.store.get(job.id)
    assert stored.status == JobStatus.SUCCEEDED and stored.texts == [] and stored.cached_sentences == 2
    assert queued_messages(services) == 0
    assert services.stats.read()[0]["jobs_answered_from_cache"] == 1
    half = submit(services, request(settings, text="你好。新的。"))
    assert half.status == JobStatus.QUEUED and half.sentences_done == half.cached_sentences == 1


def test_an_idempotency_key_names_one_job_per_client_and_one_request(settings):
    services = Services.start(settings)
    first = submit(services, request(settings, text="幂等。"), "key-1", client="a")
    again = submit(services, request(settings, texts=["幂等。"], source_lang="ZH"), "key-1", client="a")
    assert again.id == first.id  # `text` and a one-item `texts` are one request (no second message, below)
    other_client = submit(services, request(settings, text="幂等。"), "key-1", client="b")
    assert other_client.id != first.id
    with pytest.raises(IdempotencyMismatch):
        submit(services, request(settings, text="别的。"), "key-1", client="a")
    assert queued_messages(services) == 2


def test_a_full_queue_refuses_with_retry_after_and_stores_nothing(settings):
    services = services_with(settings, max_queue=1)
    submit(services, request(settings, text="第一。"))
    with pytest.raises(Overloaded) as refused:
        submit(services, request(settings, text="第二。"))
    assert refused.value.retry_after == 5 and "1 or more jobs" in refused.value.message
    assert len(services.redis.keys(services.keys.job("*"))) == 1 and queued_messages(services) == 1


def test_a_client_over_its_storage_quota_is_refused_naming_the_setting(settings):
    services = services_with(settings, client_storage_bytes=600)
    submit(services, request(settings, text="小。"), client="c")
    with pytest.raises(StorageQuotaExceeded) as refused:
        submit(services, request(settings, text="大" * 500), client="c")
    assert "TRANSQ_CLIENT_STORAGE_BYTES" in refused.value.message and refused.value.retry_after >= 1
    submit(services, request(settings, text="大" * 500), client="d")  # another client's quota is its own


def test_a_message_the_broker_refuses_takes_the_job_and_its_key_back(settings):
    dead_broker = make_celery(dataclasses.replace(settings, redis_url="redis://127.0.0.1:1/0"))
    services = Services.start(settings, celery=dead_broker)
    with pytest.raises(Unavailable) as refused:
        submit(services, request(settings, text="发不出去。"), "key-2", client="a")
    assert refused.value.retry_after == 5
    assert not services.redis.keys(services.keys.job("*")) and not services.redis.keys(services.keys.idempotency("*"))
    assert services.store.pending_count(route_for(settings).key) == 0

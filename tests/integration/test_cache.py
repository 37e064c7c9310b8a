"""The shared sentence cache, end to end (issue: repeated sentences never reach the model)."""

import pytest
import requests

pytestmark = pytest.mark.slow


def test_resubmission_is_answered_from_cache_without_queueing(stack):
    texts = ["缓存测试第一句。缓存测试第二句！", "缓存测试第三句"]
    first = stack.client.wait(stack.client.submit(texts)["id"])
    assert first["status"] == "succeeded"
    messages_before = stack.r.llen(stack.queue)
    submitted_before = stack.stat("jobs_answered_from_cache")
    response = requests.post(stack.api.url + "/v1/jobs", json={"texts": texts}, timeout=10)
    assert response.status_code == 200
    again = response.json()
    assert again["status"] == "succeeded"
    assert again["result"]["translations"] == first["result"]["translations"]
    assert again["cached_sentences"] == 3
    assert stack.r.llen(stack.queue) == messages_before == 0
    assert stack.stat("jobs_answered_from_cache") == submitted_before + 1
    assert stack.client.job(again["id"])["status"] == "succeeded"  # still readable


def test_one_new_sentence_among_cached_ones_translates_only_that_one(stack):
    stack.client.wait(stack.client.submit(["部分缓存一。部分缓存二。"])["id"])
    translated_before = stack.stat("sentences_translated")
    job = stack.client.wait(stack.client.submit(["部分缓存一。部分缓存二。全新的句子。"])["id"])
    assert job["status"] == "succeeded" and job["cached_sentences"] == 2
    assert stack.stat("sentences_translated") == translated_before + 1


def test_cached_sentences_count_as_done_from_the_start(stack):
    stack.client.wait(stack.client.submit(["先翻译这一句。", "再翻译这一句。"])["id"])
    job = stack.client.submit(["先翻译这一句。再翻译这一句。", "这一句是新的。"])
    assert job["cached_sentences"] == 2 and job["progress"]["sentences_done"] == 2
    assert stack.client.wait(job["id"])["progress"]["sentences_done"] == 3


def test_repeated_sentence_in_a_job_is_translated_once(stack):
    translated_before = stack.stat("sentences_translated")
    job = stack.client.wait(stack.client.submit(["重复的句子。重复的句子。", "重复的句子。"])["id"])
    assert job["status"] == "succeeded"
    assert stack.stat("sentences_translated") == translated_before + 1
    t = job["result"]["translations"]
    assert t[0] == f"{t[1]} {t[1]}"


def test_every_cache_entry_has_a_ttl(stack):
    stack.client.wait(stack.client.submit(["生存时间的测试。"])["id"])
    keys = stack.r.keys(f"{stack.settings.key_prefix}c:*")
    assert keys
    for key in keys:
        assert 0 < stack.r.ttl(key) <= stack.settings.cache_ttl


def test_changed_generation_setting_is_a_miss(make_stack):
    """RELIABILITY 20: another generation setting (or model revision) never hits."""
    s = make_stack()
    text = ["设置改变以后不能命中。"]
    s.client.wait(s.client.submit(text)["id"])
    assert requests.post(s.api.url + "/v1/jobs", json={"texts": text}, timeout=10).status_code == 200
    s.workers[0].stop()
    s.r.delete(f"{s.settings.key_prefix}cache-ns:{s.settings.model}")
    s.r.delete(f"{s.settings.key_prefix}workers")
    s.add_worker(name="beam2", num_beams=2)
    s.api.stop()
    s.api.start()  # a fresh API process: no remembered namespace
    translated = s.stat("sentences_translated")
    response = requests.post(s.api.url + "/v1/jobs", json={"texts": text}, timeout=10)
    assert response.status_code == 202
    assert s.client.wait(response.json()["id"])["status"] == "succeeded"
    assert s.stat("sentences_translated") == translated + 1


def test_cache_server_down_jobs_still_succeed(make_stack, tmp_path):
    """RELIABILITY 9: cache down -> translations still succeed; the broker is unaffected."""
    from devstack.redis_server import RedisServer

    cache = RedisServer().start()
    s = make_stack(cache_url=cache.url)
    text = ["缓存服务器停了。"]
    assert s.client.wait(s.client.submit(text)["id"])["status"] == "succeeded"
    cache.kill()
    response = requests.post(s.api.url + "/v1/jobs", json={"texts": text}, timeout=10)
    assert response.status_code == 202
    job = s.client.wait(response.json()["id"])
    assert job["status"] == "succeeded" and job["cached_sentences"] == 0
    assert "sentence cache unavailable" in s.workers[0].log_tail(20000)

"""RELIABILITY 6-9: broker restarts with and without persistence, a full broker, a dead cache."""

import time

import pytest
import requests

from tests.reliability.conftest import StatusRecorder, slow_text

pytestmark = pytest.mark.slow


def post_job(stack, texts, timeout=10):
    return requests.post(stack.api.url + "/v1/jobs", json={"texts": texts}, timeout=timeout)


def test_06_broker_restart_with_aof_every_accepted_job_finishes(make_stack):
    s = make_stack(appendonly=True, test_hooks=True, visibility_timeout=20, task_soft_time_limit=15, task_time_limit=18)
    running = s.client.submit([slow_text(3, "aof-running")])
    queued = [s.client.submit([f"AOF排队的工作{i}。"]) for i in range(3)]
    recorder = StatusRecorder(s, running["id"])
    s.wait_status(running["id"], ("running",), timeout=30)
    s.redis.kill()
    started = time.monotonic()
    response = post_job(s, ["停机期间的工作。"])
    assert time.monotonic() - started < 5  # no hang
    assert response.status_code == 503 and response.json()["error"]["code"] == "unavailable"
    assert "Retry-After" in response.headers
    assert requests.get(s.api.url + "/v1/jobs/" + running["id"], timeout=10).status_code == 503
    time.sleep(1)
    s.redis.start()  # same port, same AOF directory; API and workers are not restarted
    for job in [running, *queued]:
        assert s.client.wait(job["id"], timeout=120)["status"] == "succeeded", job["id"]
    recorder.stop()
    assert s.client.wait(s.client.submit(["恢复以后的工作。"])["id"], timeout=60)["status"] == "succeeded"


def test_07_broker_restart_without_persistence_jobs_are_404_not_queued_forever(make_stack):
    s = make_stack(worker=False)
    job = s.client.submit(["没有持久化的工作。"])
    s.redis.kill()
    s.redis.start()  # empty: no AOF, no RDB
    response = requests.get(s.api.url + "/v1/jobs/" + job["id"], timeout=10)
    assert response.status_code == 404
    s.add_worker()
    assert s.client.wait(s.client.submit(["重启以后的工作。"])["id"], timeout=60)["status"] == "succeeded"


def test_08_full_broker_gives_503_and_writes_nothing(make_stack):
    s = make_stack(worker=False)
    used = int(s.r.info("memory")["used_memory"])
    s.r.config_set("maxmemory", used + 256 * 1024)
    s.r.config_set("maxmemory-policy", "noeviction")
    filler = "x" * 1024
    i = 0
    while True:
        try:
            s.r.set(f"filler:{i}", filler)
            i += 1
        except Exception:  # noqa: BLE001 - OOM reached
            break
    jobs_before = len(s.r.keys("transq:job:*"))
    pending_before = s.r.zcard(s.pending)
    messages_before = s.r.llen(s.queue)
    response = post_job(s, ["满了的工作。" * 20])
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "unavailable" and "Retry-After" in response.headers
    assert len(s.r.keys("transq:job:*")) == jobs_before
    assert s.r.zcard(s.pending) == pending_before
    assert s.r.llen(s.queue) == messages_before
    s.r.config_set("maxmemory", 0)
    assert post_job(s, ["空间恢复了。"]).status_code == 202


def test_09_cache_evicting_jobs_still_succeed(make_stack):
    """Case 9 with a cache that evicts everything it is given (a dead cache is tested in tests/integration/test_cache.py)."""
    from devstack.redis_server import RedisServer

    cache = RedisServer(maxmemory="1", policy="allkeys-lru").start()
    try:
        s = make_stack(cache_url=cache.url)
        for i in range(3):
            job = s.client.wait(s.client.submit([f"被驱逐的缓存{i}。", "同一句。"])["id"], timeout=60)
            assert job["status"] == "succeeded"
    finally:
        cache.stop()

"""RELIABILITY 19, 22-25 (20 is in tests/integration/test_cache.py, 21 in test_worker_faults.py)."""

import re
import threading

import pytest
import requests

from api import create_app
from tests.stack import stack_settings

pytestmark = pytest.mark.slow


def test_19_ids_are_random_and_unknown_ids_get_the_same_404(stack):
    ids = {stack.client.submit([f"随机编号{i}。"])["id"] for i in range(20)}
    assert len(ids) == 20 and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    real = next(iter(ids))
    guess = real[:-1] + ("0" if real[-1] != "0" else "1")
    responses = [requests.get(f"{stack.api.url}/v1/jobs/{j}", timeout=5) for j in (guess, "f" * 32, "nope")]
    assert {r.status_code for r in responses} == {404}
    assert len({r.text.replace(j, "") for r, j in zip(responses, (guess, "f" * 32, "nope"))}) == 1


def test_22_api_keys_401_and_never_logged(make_stack):
    s = make_stack(api_keys="key-one-SECRET,key-two-SECRET")
    url = s.api.url + "/v1/jobs"
    body = {"text": "要钥匙。"}
    assert requests.post(url, json=body, timeout=5).status_code == 401
    wrong = requests.post(url, json=body, headers={"Authorization": "Bearer nope"}, timeout=5)
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "unauthorized"
    assert (
        requests.post(url, json=body, headers={"Authorization": "Bearer key-two-SECRET"}, timeout=5).status_code == 202
    )
    assert requests.post(url, json=body, headers={"X-API-Key": "key-one-SECRET"}, timeout=5).status_code in (200, 202)
    assert requests.get(s.api.url + "/healthz", timeout=5).status_code == 200  # probes need no key
    logs = s.api.log_path.read_text() + "".join(w.log_tail(100000) for w in s.workers)
    assert "SECRET" not in logs


def test_23_rate_limit_429_with_retry_after_and_others_still_served(make_stack):
    s = make_stack(api_keys="flooder,polite", rate_limit="5/minute", worker=False)
    url = s.api.url + "/v1/jobs"
    statuses = []
    for _ in range(8):
        r = requests.post(url, json={"text": "洪水。"}, headers={"X-API-Key": "flooder"}, timeout=5)
        statuses.append(r.status_code)
    assert statuses.count(429) >= 3
    limited = requests.post(url, json={"text": "洪水。"}, headers={"X-API-Key": "flooder"}, timeout=5)
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(limited.headers["Retry-After"]) <= 61
    polite = requests.post(url, json={"text": "礼貌。"}, headers={"X-API-Key": "polite"}, timeout=5)
    assert polite.status_code == 202


def test_24_queue_over_its_limit_is_503_with_retry_after(make_stack):
    s = make_stack(max_queue=3, worker=False)
    for i in range(3):
        assert s.client.submit([f"排队{i}。"])["status"] == "queued"
    response = requests.post(s.api.url + "/v1/jobs", json={"text": "太多了。"}, timeout=5)
    assert response.status_code == 503 and response.json()["error"]["code"] == "overloaded"
    assert int(response.headers["Retry-After"]) > 0
    assert s.r.zcard(s.pending) == 3


def test_25_production_app_has_debug_off(redis_server, tmp_path):
    app = create_app({"SETTINGS": stack_settings(redis_server.url, tmp_path)})
    assert app.debug is False and app.testing is False


def test_api_handles_concurrent_submissions(stack):
    results = []

    def submit(i):
        results.append(requests.post(stack.api.url + "/v1/jobs", json={"text": f"并发{i}。"}, timeout=30).status_code)

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(results) <= {200, 202} and len(results) == 20


def test_redis_urls_with_passwords_work_and_are_never_logged(make_stack):
    s = make_stack(password="pw-Sup3rSecret")
    assert "pw-Sup3rSecret" in s.settings.redis_url
    job = s.client.wait(s.client.submit(["有密码的Redis。"])["id"], timeout=60)
    assert job["status"] == "succeeded"
    assert requests.get(s.api.url + "/readyz", timeout=5).status_code == 200
    logs = s.api.log_path.read_text() + "".join(w.log_tail(100000) for w in s.workers)
    assert "Sup3rSecret" not in logs
    assert "***@127.0.0.1" in logs  # the URL is logged, redacted


def test_20_clients_cannot_write_cache_entries_or_choose_keys(make_stack):
    """Only workers write the cache; nothing a client sends names a key or a translation."""
    s = make_stack(worker=False)
    body = {"text": "客户端不能写缓存。", "translations": ["forged"], "cache_key": "transq:c:x:y", "namespace": "x"}
    response = requests.post(s.api.url + "/v1/jobs", json=body, timeout=5)
    assert response.status_code == 202
    assert s.r.keys("transq:c:*") == []
    s.add_worker()
    job = s.client.wait(response.json()["id"], timeout=60)
    assert job["result"]["translations"] != ["forged"]
    assert not s.r.exists("transq:c:x:y")

"""Character quotas through a real API process (gunicorn) and a real Redis: each key's characters counted at
submission, 429 quota_exceeded past its daily limit with the reset time, another key unaffected, a job not
written (queue full) not charged, GET /v1/usage for the caller's own key, usage by key digest in /metrics."""

import hashlib

import pytest
import requests

from devstack.redis_server import RedisServer
from tests.stack import ApiProcess, stack_settings

pytestmark = pytest.mark.slow
KEYS = ("first-secret-key", "second-secret-key")


def digest(key: str) -> str:
    return "key:" + hashlib.sha256(key.encode()).hexdigest()[:32]


@pytest.fixture
def api(tmp_path):
    with RedisServer() as server:
        settings = stack_settings(
            server.url,
            tmp_path / "no-model",
            api_keys=",".join(KEYS),
            quota_chars_per_day=20,
            quota_overrides=f"{digest(KEYS[1])}=1000/0",
            max_queue=3,
        )
        process = ApiProcess(settings, tmp_path / "api.log").start(workers=1)
        try:
            yield process
        finally:
            process.stop()


def submit(api, key: str, text: str) -> requests.Response:
    return requests.post(
        api.url + "/v1/jobs", json={"text": text}, headers={"Authorization": f"Bearer {key}"}, timeout=10
    )


def usage(api, key: str) -> dict:
    response = requests.get(api.url + "/v1/usage", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_characters_are_counted_per_key_and_refused_past_the_daily_limit(api):
    assert submit(api, KEYS[0], "一二三四五六七八。").status_code == 202  # 9 characters
    assert submit(api, KEYS[0], "一二三四五六七八。").status_code == 202  # 18
    refused = submit(api, KEYS[0], "一二三。")  # 22 > 20
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "quota_exceeded"
    assert "daily limit of 20 (18 used)" in refused.json()["error"]["message"]
    assert 0 < int(refused.headers["Retry-After"]) <= 86_401

    mine = usage(api, KEYS[0])
    assert mine["client"] == digest(KEYS[0])
    today = mine["day"]["current"]
    assert (today["characters"], today["jobs"], today["limit"], today["remaining"]) == (18, 2, 20, 2)
    assert mine["month"]["current"]["limit"] is None and mine["day"]["last"]["characters"] == 0

    # The other key has its own, larger limit (TRANSQ_QUOTA_OVERRIDES); a job the queue cap refuses
    # (503: nothing written) is not charged.
    assert submit(api, KEYS[1], "另一把钥匙。").status_code == 202
    overloaded = submit(api, KEYS[1], "队列满了。")
    assert overloaded.status_code == 503
    theirs = usage(api, KEYS[1])["day"]["current"]
    assert (theirs["characters"], theirs["jobs"], theirs["limit"]) == (6, 1, 1000)

    metrics = requests.get(api.url + "/metrics", timeout=10).text
    assert f'transq_usage_characters_total{{client="{digest(KEYS[0])}"}} 18.0' in metrics
    assert KEYS[0] not in metrics and KEYS[1] not in metrics


def test_usage_needs_a_key_when_keys_are_on(api):
    assert requests.get(api.url + "/v1/usage", timeout=10).status_code == 401

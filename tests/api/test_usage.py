"""Character quotas through a real API process (gunicorn) and a real Redis: each key's characters counted at
submission, 429 quota_exceeded past its daily limit with the reset time, another key unaffected, a job not
written (queue full) not charged, GET /v1/usage for the caller's own key, usage by key id in /metrics (only
with the metrics token; an id is keyed with the server's secret, never a bare hash of the key)."""

import hashlib
import hmac

import pytest
import requests

from devstack.redis_server import RedisServer
from tests.stack import ApiProcess, stack_settings

pytestmark = pytest.mark.slow
KEYS = ("first-secret-key", "second-secret-key")
SECRET = "a-server-secret-for-key-ids"
METRICS_TOKEN = "scraper-token-0123456789"


def digest(key: str) -> str:
    """A key's id: HMAC-SHA256 under TRANSQ_KEY_ID_SECRET (shared.store.key_ids)."""
    return "key:" + hmac.new(SECRET.encode(), key.encode(), hashlib.sha256).hexdigest()[:32]


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
            key_id_secret=SECRET,
            metrics_token=METRICS_TOKEN,
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

    # /metrics: totals for anyone, the series by key only with the metrics token; never a key, nor its bare hash
    scraped = {
        "open": requests.get(api.url + "/metrics", timeout=10).text,
        "wrong token": requests.get(api.url + "/metrics", headers={"Authorization": "Bearer nope"}, timeout=10).text,
        "token": requests.get(
            api.url + "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=10
        ).text,
    }
    assert 'transq_usage_characters_total{client="all"} 24.0' in scraped["open"]
    assert 'transq_usage_characters_total{client="all"} 24.0' in scraped["wrong token"]
    assert f'transq_usage_characters_total{{client="{digest(KEYS[0])}"}} 18.0' in scraped["token"]
    assert f'transq_usage_characters_total{{client="{digest(KEYS[1])}"}} 6.0' in scraped["token"]
    for text in scraped.values():
        for key in KEYS:
            assert key not in text and hashlib.sha256(key.encode()).hexdigest()[:32] not in text
    for text in (scraped["open"], scraped["wrong token"]):
        assert digest(KEYS[0]) not in text and digest(KEYS[1]) not in text


def test_guessing_the_metrics_token_is_limited_like_guessing_a_key(api):
    """A wrong metrics token is a failed credential check of its address (TRANSQ_AUTH_FAILURE_LIMIT, 20/minute):
    past the limit a wrong token gets 429. The right token still passes, as a valid API key does past its
    limit (tests/reliability/test_hostile_clients.py): a guesser cannot lock the scraper out. A client's own API
    key, or no token, is no guess."""
    for _ in range(25):
        own_key = requests.get(api.url + "/metrics", headers={"Authorization": f"Bearer {KEYS[0]}"}, timeout=10)
        assert own_key.status_code == 200
    answers = [
        requests.get(api.url + "/metrics", headers={"Authorization": f"Bearer guess-{n}"}, timeout=10)
        for n in range(21)
    ]
    assert [a.status_code for a in answers[:20]] == [200] * 20
    assert answers[20].status_code == 429 and answers[20].json()["error"]["code"] == "rate_limited"
    assert 0 < int(answers[20].headers["Retry-After"]) <= 61
    right = requests.get(api.url + "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=10)
    assert right.status_code == 200
    assert requests.get(api.url + "/metrics", timeout=10).status_code == 200


def test_usage_needs_a_key_when_keys_are_on(api):
    assert requests.get(api.url + "/v1/usage", timeout=10).status_code == 401


def test_an_idempotent_retry_near_the_limit_gets_its_job_without_a_charge(api):
    """The hostile-client trial: a retry with the job's Idempotency-Key, near the limit, got 429 instead of the
    job it names (the charge came before the key was looked up)."""
    headers = {"Authorization": f"Bearer {KEYS[0]}", "Idempotency-Key": "order-42"}
    body = {"text": "一二三四五六七八九十一二三四五六七。"}  # 18 characters of 20
    first = requests.post(api.url + "/v1/jobs", json=body, headers=headers, timeout=10)
    assert first.status_code == 202, first.text
    for _ in range(3):
        again = requests.post(api.url + "/v1/jobs", json=body, headers=headers, timeout=10)
        assert again.status_code == 202, again.text
        assert again.json()["id"] == first.json()["id"]
    other = requests.post(api.url + "/v1/jobs", json={"text": "另一个。"}, headers=headers, timeout=10)
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_mismatch", other.text
    today = usage(api, KEYS[0])["day"]["current"]
    assert (today["characters"], today["jobs"]) == (18, 1)
    refused = requests.post(
        api.url + "/v1/jobs", json={"text": "一二三。"}, headers={**headers, "Idempotency-Key": "new"}
    )
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "quota_exceeded"

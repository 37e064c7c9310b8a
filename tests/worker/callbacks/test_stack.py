"""A callback through the whole real stack: the API (gunicorn) takes the job, a real Celery worker with the
real model translates it, the worker's status change puts it in the outbox, the real deliverer POSTs it to a
real receiver on 127.0.0.1."""

from __future__ import annotations

import json

import requests

from tests.worker.callbacks.conftest import SECRET, callback_settings, documented_verify, wait_until, where


def test_a_job_submitted_to_the_api_and_translated_by_a_worker_calls_back(make_stack, receiver, start_deliverer):
    s = make_stack(worker=False, **_callback_overrides(receiver.url))
    start_deliverer(callback_settings(s.redis.url, where(receiver.url)))
    body = {"texts": ["今天天气很好。", "第二段。"], "callback_url": receiver.url}
    response = requests.post(s.api.url + "/v1/jobs", json=body, timeout=10)
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["status"] == "queued" and job["callback"] == {
        "url": receiver.url,
        "state": "pending",
        "attempts": 0,
        "last_status": None,
        "last_error": None,
    }
    s.add_worker()
    (got,) = receiver.wait_for(1, timeout=120)
    final = s.client.job(job["id"])
    assert final["status"] == "succeeded"
    view = json.loads(got.body)
    assert view["id"] == job["id"] and view["result"] == final["result"]
    assert documented_verify()(SECRET.encode(), got.headers, got.body, receiver.url, "")  # API keys off: no owner
    record = wait_until(
        lambda: (
            (r := s.r.hgetall(f"{s.settings.key_prefix}job:{job['id']}")).get("callback_state") == "delivered" and r
        ),
        what="the delivery on the job's record",
    )
    assert record["callback_attempts"] == "1" and record["callback_last_status"] == "200"
    assert s.client.job(job["id"])["callback"]["state"] == "delivered"
    # The policy is checked at submission: a loopback URL the settings do not allow is refused, naming it.
    refused = requests.post(
        s.api.url + "/v1/jobs", json={"text": "你好", "callback_url": "http://10.0.0.1/hook"}, timeout=10
    )
    assert refused.status_code == 422 and refused.json()["error"]["message"].startswith("callback_url")


def _callback_overrides(receiver_url: str) -> dict[str, object]:
    """The stack's settings for callbacks: the API and the deliverer agree on secret and policy."""
    fields = ("callback_secret", "callback_allow_http_hosts", "callback_allow_private_hosts")
    settings = callback_settings("redis://unused", where(receiver_url))
    return {name: getattr(settings, name) for name in fields}

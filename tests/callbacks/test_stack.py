"""A callback through the whole real stack: the API (gunicorn) takes the job, a real Celery worker with the
real model translates it, the worker's status change puts it in the outbox, the real deliverer POSTs it to a
real receiver on 127.0.0.1.

Until the request contract takes `callback_url` (the lead wires it: POST /v1/jobs' field, checked by
shared.callback_policy), the test writes the field on the queued job's record, where the API's create will
write it; the rest is the path a user's job takes."""

from __future__ import annotations

import json

from tests.callbacks.conftest import SECRET, callback_settings, readme_verify, wait_until


def test_a_job_submitted_to_the_api_and_translated_by_a_worker_calls_back(make_stack, receiver, start_deliverer):
    s = make_stack(worker=False, **_callback_overrides())
    start_deliverer(callback_settings(s.redis.url))
    job = s.client.submit(["今天天气很好。", "第二段。"])
    assert job["status"] == "queued"
    s.r.hset(f"{s.settings.key_prefix}job:{job['id']}", "callback_url", receiver.url)  # TODO(lead): the field
    s.add_worker()
    (got,) = receiver.wait_for(1, timeout=120)
    final = s.client.job(job["id"])
    assert final["status"] == "succeeded"
    view = json.loads(got.body)
    assert view["id"] == job["id"] and view["result"] == final["result"]
    assert readme_verify()(SECRET.encode(), got.headers, got.body)
    record = wait_until(
        lambda: (
            (r := s.r.hgetall(f"{s.settings.key_prefix}job:{job['id']}")).get("callback_state") == "delivered" and r
        ),
        what="the delivery on the job's record",
    )
    assert record["callback_attempts"] == "1" and record["callback_last_status"] == "200"


def _callback_overrides() -> dict[str, object]:
    """The stack's settings for callbacks: the API and the deliverer agree on secret and policy."""
    fields = ("callback_secret", "callback_allow_http_hosts", "callback_allow_private_hosts")
    settings = callback_settings("redis://unused")
    return {name: getattr(settings, name) for name in fields}

"""Submit -> poll -> succeeded through gunicorn, Redis and a real Celery worker."""

import pytest
import requests

from transq_cli.client import TransqError

pytestmark = pytest.mark.slow


def test_readyz_is_200_with_a_worker(stack):
    response = requests.get(stack.api.url + "/readyz", timeout=5)
    assert response.status_code == 200 and response.json()["workers"] >= 1
    # The offline model's generation config is opus-mt's, field for field (renormalize_logits included):
    # every live worker decodes with transq's own loop, none fell back to generate().
    assert response.json()["decoding"] == {"transq": response.json()["workers"]}
    metrics = requests.get(stack.api.url + "/metrics", timeout=5).text
    assert 'transq_workers_decoding{decoding="transq"}' in metrics


def test_submit_poll_succeeds_with_one_translation_per_text_in_order(stack):
    texts = ["项目一：今天天气很好。明天下雨！", "第二段。\n\n第三段。", "谢谢你的帮助"]
    response = requests.post(
        stack.api.url + "/v1/jobs", json={"texts": texts, "source_lang": "zh", "target_lang": "en"}, timeout=10
    )
    assert response.status_code == 202
    job = response.json()
    assert response.headers["Location"] == f"/v1/jobs/{job['id']}"
    assert job["status"] == "queued" and job["progress"] == {"sentences_done": 0, "sentences_total": 5}
    done = stack.client.wait(job["id"], timeout=60)
    assert done["status"] == "succeeded", done
    translations = done["result"]["translations"]
    assert len(translations) == 3
    assert translations[1].count("\n\n") == 1  # the paragraph break survived
    assert done["progress"] == {"sentences_done": 5, "sentences_total": 5}
    assert done["started_at"] and done["finished_at"]
    # In order: each text translated alone gives the same text.
    for text, translation in zip(texts, translations):
        alone = stack.client.wait(stack.client.submit([text])["id"])
        assert alone["result"]["translations"] == [translation]


def test_single_text_field_and_emoji_only_text(stack):
    job = requests.post(stack.api.url + "/v1/jobs", json={"text": "😀🎉"}, timeout=10)
    # No sentence to translate: answered at once, the span kept as it is.
    assert job.status_code == 200
    assert job.json()["result"]["translations"] == ["😀🎉"]


def test_cancel_queued_job_and_conflict_after_finish(make_stack):
    s = make_stack(worker=False)
    job = s.client.submit(["要取消的工作。"])
    cancelled = s.client.cancel(job["id"])
    assert cancelled["status"] == "cancelled"
    with pytest.raises(TransqError) as err:
        s.client.cancel(job["id"])
    assert err.value.status == 409 and err.value.code == "conflict"
    s.add_worker()
    follow = s.client.wait(s.client.submit(["之后的工作。"])["id"])
    assert follow["status"] == "succeeded"
    assert s.client.job(job["id"])["status"] == "cancelled"  # the worker skipped it


def test_workers_ready_503_before_a_worker_then_200_while_the_api_is_ready_throughout(make_stack):
    s = make_stack(worker=False)
    assert requests.get(s.api.url + "/readyz/workers", timeout=5).status_code == 503
    assert requests.get(s.api.url + "/readyz", timeout=5).json()["workers"] == 0
    s.add_worker()
    assert requests.get(s.api.url + "/readyz/workers", timeout=5).status_code == 200
    assert requests.get(s.api.url + "/readyz", timeout=5).json()["workers"] == 1


def test_translate_waits_and_legacy_call(stack):
    response = requests.post(
        stack.api.url + "/v1/translate", json={"texts": ["你好。", "再见。"], "timeout": 30}, timeout=40
    )
    assert response.status_code == 200 and len(response.json()["translations"]) == 2
    legacy = requests.post(stack.api.url + "/api/translate", json={"text": "早上好。"}, timeout=40)
    assert legacy.status_code == 200
    assert set(legacy.json()) == {"translation", "timestamp"} and legacy.json()["translation"]


def test_translate_with_zero_timeout_returns_202_job(stack):
    response = requests.post(
        stack.api.url + "/v1/translate", json={"text": "一个新的句子，零等待。", "timeout": 0}, timeout=10
    )
    assert response.status_code in (200, 202)
    if response.status_code == 202:
        assert response.json()["status"] in ("queued", "running", "succeeded")


def test_idempotency_key_returns_the_same_job(stack):
    first = stack.client.submit(["幂等的请求。"], idempotency_key="abc-123")
    second = stack.client.submit(["幂等的请求。"], idempotency_key="abc-123")
    assert first["id"] == second["id"]
    third = stack.client.submit(["幂等的请求。"], idempotency_key="other")
    assert third["id"] != first["id"]

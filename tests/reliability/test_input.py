"""RELIABILITY 14-18 through gunicorn and a real worker (the 4xx table is in tests/api/test_errors.py)."""

import json

import pytest
import requests

pytestmark = pytest.mark.slow


def post_raw(stack, data: bytes, content_type="application/json"):
    return requests.post(stack.api.url + "/v1/jobs", data=data, headers={"Content-Type": content_type}, timeout=30)


def test_14_bad_requests_enqueue_nothing(stack):
    before = (
        stack.r.llen(stack.queue),
        stack.r.zcard(stack.pending),
        len(stack.r.keys("transq:job:*")),
    )
    cases = [
        (b"{oops", "application/json", 400),
        (json.dumps({"text": "好"}).encode(), "text/plain", 415),
        (json.dumps({"texts": [1]}).encode(), "application/json", 422),
        (b'{"text": "' + "字".encode() * 400_000 + b'"}', "application/json", 413),
    ]
    for data, content_type, status in cases:
        response = post_raw(stack, data, content_type)
        assert response.status_code == status
        assert set(response.json()["error"]) == {"code", "message"}
        assert "Traceback" not in response.text
    after = (
        stack.r.llen(stack.queue),
        stack.r.zcard(stack.pending),
        len(stack.r.keys("transq:job:*")),
    )
    assert after == before


def test_15_invalid_utf8_and_lone_surrogates_never_reach_the_worker(stack):
    assert post_raw(stack, b'{"text": "\xc3\x28"}').status_code == 400
    assert post_raw(stack, b'{"text": "\\udfff"}').status_code == 422
    assert post_raw(stack, b'{"texts": ["ok", "\\ud83d"]}').status_code == 422


@pytest.mark.parametrize(
    "text",
    [
        "表情😀很好。👨‍👩‍👧‍👦一家人。",  # emoji and a ZWJ sequence
        "مرحبا بالعالم。שלום。",  # right-to-left scripts
        "Cafe\u0301 ñ 한국어。",  # combining marks, Hangul
        "<b>加粗</b>的文字。<script>alert(1)</script>",  # HTML is text, never markup
        "中文和English混合的句子。Mixed text!",
        "🎉🎉",  # nothing translatable: passes through
        "  前后有空格  ",
    ],
)
def test_16_odd_but_valid_input_round_trips(stack, text):
    job = stack.client.wait(stack.client.submit([text])["id"], timeout=60)
    assert job["status"] == "succeeded", job
    (translation,) = job["result"]["translations"]
    assert isinstance(translation, str)
    if text == "🎉🎉":
        assert translation == "🎉🎉"


def test_17_one_100000_character_sentence_is_split_and_translated(stack):
    text = "字" * 100_000
    response = requests.post(stack.api.url + "/v1/jobs", json={"text": text}, timeout=30)
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["progress"]["sentences_total"] == -(-100_000 // stack.settings.max_sentence_chars)
    done = stack.client.wait(job["id"], timeout=240)
    assert done["status"] == "succeeded", done.get("error")
    assert "IndexError" not in stack.workers[0].log_tail(20000)


def test_18_ten_thousand_tiny_sentences_in_one_job(stack):
    text = "好。" * 10_000
    translated_before = stack.stat("sentences_translated")
    batches_before = stack.stat("batches")
    response = requests.post(stack.api.url + "/v1/jobs", json={"text": text}, timeout=30)
    assert response.status_code in (200, 202)
    job = stack.client.wait(response.json()["id"], timeout=240)
    assert job["status"] == "succeeded"
    assert job["progress"] == {"sentences_done": 10_000, "sentences_total": 10_000}
    # Identical sentences are translated once; the message carried only the job id.
    assert stack.stat("sentences_translated") - translated_before <= 1
    assert stack.stat("batches") - batches_before <= 1


def test_18_many_distinct_sentences_are_batched(stack):
    text = "".join(f"第{i}号句子。" for i in range(2000))
    batches_before = stack.stat("batches")
    job = stack.client.wait(stack.client.submit([text])["id"], timeout=240)
    assert job["status"] == "succeeded" and job["progress"]["sentences_done"] == 2000
    batches = stack.stat("batches") - batches_before
    assert 0 < batches <= -(-2000 // stack.settings.max_batch_sentences) + 5


def test_over_the_sentence_limit_is_422(stack):
    response = requests.post(stack.api.url + "/v1/jobs", json={"text": "好。" * 10_001}, timeout=30)
    assert response.status_code == 422 and "sentences" in response.json()["error"]["message"]

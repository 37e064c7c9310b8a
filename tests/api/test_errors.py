"""RELIABILITY 14, 15, 19 and the errors of docs/api.md: every error is one JSON shape, nothing is enqueued."""

import json

import pytest


def error_of(response):
    body = response.get_json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert "Traceback" not in response.get_data(as_text=True)
    return body["error"]["code"]


def nothing_enqueued(redis_client):
    assert not redis_client.keys("transq:pending:*")
    assert not redis_client.keys("transq:jobs:*")
    assert not redis_client.keys("transq:job:*")


def post(client, body, content_type="application/json", path="/v1/jobs", **kwargs):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(path, data=data, content_type=content_type, **kwargs)


@pytest.mark.parametrize("body", [b"{not json", b"", b"[1,", b'{"texts": NaN}'])
def test_malformed_json_is_400(client, redis_client, body):
    response = post(client, body)
    assert response.status_code == 400 and error_of(response) == "invalid_json"
    nothing_enqueued(redis_client)


def test_invalid_utf8_is_400(client, redis_client):
    response = post(client, b'{"text": "\xff\xfe bad"}')
    assert response.status_code == 400 and error_of(response) == "invalid_json"
    nothing_enqueued(redis_client)


def test_lone_surrogate_is_422(client, redis_client):
    response = post(client, b'{"text": "abc \\ud800 def"}')
    assert response.status_code == 422 and error_of(response) == "validation_error"
    assert "surrogate" in response.get_json()["error"]["message"]
    nothing_enqueued(redis_client)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_wrong_content_type_is_415(client, redis_client, content_type):
    response = post(client, {"text": "你好"}, content_type=content_type)
    assert response.status_code == 415 and error_of(response) == "unsupported_media_type"
    nothing_enqueued(redis_client)


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({"texts": ["好", ""]}, "texts[1] is empty"),
        ({"texts": ["好", "  \n\t "]}, "texts[1] is empty"),
        # Blank by Python's rules only (information separators, NEL) or by JSON Schema's only (BOM):
        # the server and the OpenAPI `pattern` use one class, so both count these as empty.
        ({"texts": ["好", "\x1d\x1c"]}, "texts[1] is empty"),
        ({"texts": ["\x85"]}, "texts[0] is empty"),
        ({"text": "\ufeff\u3000"}, "text is empty"),
        ({"texts": ["好", 3]}, "texts[1] must be a string"),
        ({"texts": "好"}, "texts must be a list"),
        ({"texts": []}, "texts must not be empty"),
        ({"text": 5}, "text must be a string"),
        ({}, "exactly one of"),
        ({"text": "a", "texts": ["b"]}, "exactly one of"),
        ([1, 2], "JSON object"),
        ({"text": "好", "source_lang": 3}, "source_lang must be a string"),
    ],
)
def test_wrong_schema_is_422_naming_the_field(client, redis_client, body, fragment):
    response = post(client, body)
    assert response.status_code == 422 and error_of(response) == "validation_error"
    assert fragment in response.get_json()["error"]["message"]
    nothing_enqueued(redis_client)


@pytest.mark.parametrize(
    "body",
    [{"text": "好", "source_lang": "fr"}, {"text": "好", "target_lang": "de"}, {"text": "好", "source_lang": "en"}],
)
def test_an_unserved_language_pair_is_422_naming_the_served_ones(client, redis_client, body):
    response = post(client, body)
    assert response.status_code == 422 and error_of(response) == "unsupported_language_pair"
    assert "served pairs: zh-en" in response.get_json()["error"]["message"]
    nothing_enqueued(redis_client)


def test_limits_on_texts_characters_and_sentences(make_app, redis_client):
    client = make_app(max_texts=3, max_chars=50, max_sentences=4).test_client()
    assert post(client, {"texts": ["一"] * 4}).status_code == 422
    assert post(client, {"text": "字" * 51}).status_code == 422
    response = post(client, {"text": "一。二。三。四。五。"})
    assert response.status_code == 422 and "sentences" in response.get_json()["error"]["message"]
    nothing_enqueued(redis_client)


def test_body_over_the_byte_limit_is_413(make_app, redis_client):
    client = make_app(max_body_bytes=1000).test_client()
    response = post(client, {"text": "字" * 2000})
    assert response.status_code == 413 and error_of(response) == "payload_too_large"
    nothing_enqueued(redis_client)


def test_unknown_routes_methods_and_ids(client):
    assert error_of(client.get("/nope")) == "not_found"
    response = client.put("/v1/jobs")
    assert response.status_code == 405 and error_of(response) == "method_not_allowed"
    for job_id in ("0" * 32, "not-an-id", "../../etc"):
        response = client.get(f"/v1/jobs/{job_id}")
        assert response.status_code == 404 and error_of(response) == "not_found"
        assert client.delete(f"/v1/jobs/{job_id}").status_code == 404


def test_unexpected_exception_is_500_without_a_trace(make_app):
    app = make_app()

    @app.get("/boom")
    def boom():
        raise RuntimeError("secret internals")

    response = app.test_client().get("/boom")
    assert response.status_code == 500 and error_of(response) == "internal_error"
    assert "secret" not in response.get_data(as_text=True)


def test_the_api_is_ready_without_a_worker_and_says_no_worker_is(client):
    """Ready means jobs can be accepted: with workers scaled to zero the API stays in its Service (a queued
    job is what wakes them); whether any worker is live is /readyz/workers (and transq_workers_ready)."""
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.get_json()["workers"] == 0
    response = client.get("/readyz/workers")
    assert response.status_code == 503 and error_of(response) == "unavailable"
    assert client.get("/healthz").status_code == 200
    assert client.post("/v1/jobs", json={"text": "没有工人也排队。"}).status_code == 202

"""A request naming no language while two pairs are served: its detected language chooses the pair (issue 24);
where none is detected (no letters) it goes to TRANSQ_DEFAULT_PAIR (the seeds' `POST /api/translate {"text":
"你好。"}` lands on zh-en either way); without a default pair it is refused naming the served pairs."""

import json

import redis

from shared.routing.routes import Route
from shared.store.keys import Keys
from shared.store.workers import WorkerRegistry


def serve_en_zh(redis_url: str) -> None:
    """An en-zh worker's heartbeat, as the registry stores it (the API's own model is zh-en)."""
    registry = WorkerRegistry(redis.Redis.from_url(redis_url, decode_responses=True), Keys("transq:"), 60)
    registry.beat("en-zh-worker", {"pid": 1}, Route("en-zh-0123456789", "/models/en-zh", "en", "zh"), "ns")


def queued_pair(redis_client, response) -> str:
    assert response.status_code == 202, response.get_json()
    queues = [k.split(":")[-1] for k in redis_client.keys("transq:jobs:*")]
    assert len(queues) == 1, queues
    return queues[0][:5]


def post(client, body, path="/v1/jobs"):
    return client.post(path, data=json.dumps(body), content_type="application/json")


def test_a_request_naming_no_language_goes_to_the_default_pair(make_app, redis_server, redis_client):
    serve_en_zh(redis_server.url)
    client = make_app(default_pair="zh-en").test_client()
    assert queued_pair(redis_client, post(client, {"text": "你好。"})) == "zh-en"


def test_the_default_pair_can_be_the_other_one(make_app, redis_server, redis_client):
    serve_en_zh(redis_server.url)
    client = make_app(default_pair="en-zh").test_client()
    assert queued_pair(redis_client, post(client, {"text": "Hello."})) == "en-zh"


def test_a_named_language_still_wins_over_the_default(make_app, redis_server, redis_client):
    serve_en_zh(redis_server.url)
    client = make_app(default_pair="zh-en").test_client()
    assert queued_pair(redis_client, post(client, {"text": "Hello.", "source_lang": "en"})) == "en-zh"


def test_a_request_naming_no_language_goes_to_the_pair_of_its_detected_language(make_app, redis_server, redis_client):
    serve_en_zh(redis_server.url)
    client = make_app(default_pair="zh-en").test_client()
    response = post(client, {"text": "The weather is fine today."})
    assert queued_pair(redis_client, response) == "en-zh"
    assert response.get_json()["detected"]["language"] == "en"


def test_without_a_default_pair_an_undetectable_request_is_refused(make_app, redis_server, redis_client):
    serve_en_zh(redis_server.url)
    client = make_app(default_pair="").test_client()
    response = post(client, {"text": "2024"}, path="/api/translate")  # no letters: no language detected
    body = response.get_json()
    assert response.status_code == 422 and body["error"]["code"] == "unsupported_language_pair", body
    assert "en-zh, zh-en" in body["error"]["message"]
    assert not redis_client.keys("transq:job:*")


def test_an_unserved_default_pair_is_refused_too(make_app, redis_server, redis_client):
    serve_en_zh(redis_server.url)
    client = make_app(default_pair="de-en").test_client()
    assert post(client, {"text": "42"}).status_code == 422

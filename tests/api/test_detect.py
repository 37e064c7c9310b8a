"""POST /v1/detect through a real API process (gunicorn, a private Redis), and the route a detected
language chooses among several served pairs (shared.routing.detected_route, on real worker heartbeats)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import redis
import requests

from devstack.redis_server import RedisServer
from shared.errors import UnsupportedLanguagePair, ValidationError
from shared.routing.detected_route import choose_route, detected_route, document_route, overall
from shared.routing.language_detection import Detection, detect
from shared.routing.route_table import RouteTable
from shared.routing.routes import Route
from shared.store.keys import Keys
from shared.store.workers import WorkerRegistry
from tests.stack import ApiProcess, stack_settings

pytestmark = pytest.mark.slow

ZH_EN = Route("zh-en-0123456789", "/models/zh-en", "zh", "en")
EN_ZH = Route("en-zh-0123456789", "/models/en-zh", "en", "zh")


@pytest.fixture(scope="module")
def redis_url():
    with RedisServer() as server:
        yield server.url


def start_api(redis_url: str, tmp_path, name: str, **overrides) -> ApiProcess:
    settings = stack_settings(redis_url, tmp_path / "no-model", **overrides)
    return ApiProcess(settings, tmp_path / f"{name}.log").start(workers=1)


@pytest.fixture(scope="module")
def api(redis_url, tmp_path_factory):
    process = start_api(redis_url, tmp_path_factory.mktemp("detect"), "api", max_texts=3, max_body_bytes=4096)
    yield process
    process.stop()


def post(api, body, **kwargs):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body, ensure_ascii=False)
    headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
    return requests.post(api.url + "/v1/detect", data=data, headers=headers, timeout=10, **kwargs)


def languages(api, texts):
    response = post(api, {"texts": texts})
    assert response.status_code == 200, response.text
    return [(d["language"], d["confidence"]) for d in response.json()["detections"]]


@pytest.mark.parametrize(
    "text, language",
    [
        ("今天天气很好，我们去公园散步吧。", "zh"),
        ("你好", "zh"),
        ("請把這份文件翻譯成英文。", "zh"),  # traditional characters
        ("我用Python写了一个REST API服务。", "zh"),  # Chinese with English words
        ("今日はとても良い天気ですね。", "ja"),
        ("このAPIはJSON形式でデータを返します。", "ja"),
        ("The weather is nice today, let's take a walk in the park.", "en"),
        ("We visited 北京 and 上海 last summer, and loved the food.", "en"),  # English with Chinese words
        ("Pouvez-vous traduire ce document en anglais ?", "fr"),
        ("오늘 날씨가 정말 좋네요.", "ko"),
    ],
)
def test_each_language_is_detected(api, text, language):
    response = post(api, {"text": text})
    assert response.status_code == 200, response.text
    [found] = response.json()["detections"]
    assert found["language"] == language and 0.5 <= found["confidence"] <= 1, found


def test_texts_are_detected_each_in_order(api):
    found = languages(api, ["Good morning", "早上好", "おはようございます"])
    assert [lang for lang, _ in found] == ["en", "zh", "ja"]


def test_a_text_without_letters_has_no_language(api):
    assert languages(api, ["2024-12-01", "今天"]) == [(None, 0.0), ("zh", 1.0)]


@pytest.mark.parametrize(
    "body, status, code, field",
    [
        ({}, 422, "validation_error", "text"),
        ({"text": "a", "texts": ["b"]}, 422, "validation_error", "texts"),
        ({"text": 3}, 422, "validation_error", "text must be a string"),
        ({"text": " \n"}, 422, "validation_error", "text is empty"),
        ({"texts": []}, 422, "validation_error", "texts must not be empty"),
        ({"texts": ["a", 1]}, 422, "validation_error", "texts[1] must be a string"),
        ({"texts": ["a", "b", "c", "d"]}, 422, "validation_error", "texts has 4 items"),
        (["not", "an", "object"], 422, "validation_error", "JSON object"),
        (b'{"text": "unterminated', 400, "invalid_json", "not valid JSON"),
        (b'{"text": "\xff"}', 400, "invalid_json", "UTF-8"),
        ({"text": "x" * 5000}, 413, "payload_too_large", "limit of 4096 bytes"),
    ],
)
def test_bad_input_is_a_json_error_naming_the_field(api, body, status, code, field):
    response = post(api, body)
    error = response.json()["error"]
    assert response.status_code == status and error["code"] == code and field in error["message"], error


def test_answers_match_the_documented_schema(api):
    from tests.api.test_openapi import conforms

    spec = requests.get(api.url + "/openapi.json", timeout=10).json()
    operation = spec["paths"]["/v1/detect"]["post"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/Detections")
    answer = post(api, {"texts": ["你好", "2024"]}).json()
    conforms(spec, "Detections", answer)
    assert answer["detections"][1]["language"] is None


def test_only_json_is_accepted(api):
    response = post(api, "今天", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415 and response.json()["error"]["code"] == "unsupported_media_type"
    assert requests.get(api.url + "/v1/detect", timeout=5).status_code == 405


def test_keys_and_rate_limits_apply(redis_url, tmp_path):
    api = start_api(redis_url, tmp_path, "keyed", api_keys="secret-key", rate_limit="2/minute")
    try:
        assert post(api, {"text": "你好"}).status_code == 401
        key = {"Authorization": "Bearer secret-key"}
        assert [post(api, {"text": "你好"}, headers=key).status_code for _ in range(3)] == [200, 200, 429]
    finally:
        api.stop()


def test_the_cli_detects_files(api, tmp_path):
    (tmp_path / "notes.txt").write_text("今天天气很好，我们去公园散步吧。", encoding="utf-8")
    (tmp_path / "mail.txt").write_text("It may rain tomorrow, remember to bring an umbrella.", encoding="utf-8")
    command = [sys.executable, "-m", "transq_cli.main", "detect", "notes.txt", "mail.txt", "-", "--url", api.url]
    run = subprocess.run(command, cwd=tmp_path, input="12:30", capture_output=True, text=True, timeout=60)
    lines = [line.split("\t") for line in run.stdout.splitlines()]
    assert run.returncode == 0 and [(lang, name) for lang, _, name in lines] == [
        ("zh", "notes.txt"),
        ("en", "mail.txt"),
        ("-", "-"),
    ], run.stderr
    missing = subprocess.run(
        [*command[:4], "nowhere.txt", "--url", api.url], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert missing.returncode == 1 and "nowhere.txt" in missing.stderr


@pytest.fixture
def two_pairs(redis_url):
    """A route table over real heartbeats of a zh-en and an en-zh worker (the API's own model: zh-en)."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.flushdb()
    registry = WorkerRegistry(client, Keys("transq:"), 60)
    registry.beat("zh-en-worker", {"pid": 1}, ZH_EN, "ns-zh")
    registry.beat("en-zh-worker", {"pid": 2}, EN_ZH, "ns-en")
    return RouteTable(registry, ZH_EN, "zh-en")


def test_the_detected_language_chooses_the_pair(two_pairs):
    route, found, per_text = detected_route(two_pairs, ["今天天气很好。"], None)
    assert route == ZH_EN and found.language == "zh" and [d.language for d in per_text] == ["zh"]
    route, found, _ = detected_route(two_pairs, ["The weather is fine today."], None)
    assert route == EN_ZH and found.language == "en" and found.confidence > 0.5
    route, _, _ = detected_route(two_pairs, ["The weather is fine today."], "zh")
    assert route == EN_ZH


def test_the_language_of_most_characters_decides_and_others_lower_the_confidence(two_pairs):
    texts = ["第一段很长的中文文字，讲的是天气和公园。", "OK", "2024"]
    route, found, per_text = detected_route(two_pairs, texts, None)
    assert route == ZH_EN and found.language == "zh" and found.confidence < 1.0
    assert [d.language for d in per_text] == ["zh", "en", ""]


@pytest.mark.parametrize(
    "texts, target, detected",
    [
        (["Pouvez-vous traduire ce document en anglais ?"], None, "'fr'"),
        (["今天天气很好。"], "de", "'zh'"),  # the source is served, not to that target
        (["2024", "!!"], None, "no letters"),
    ],
)
def test_an_unserved_detected_language_is_refused_naming_it(two_pairs, texts, target, detected):
    with pytest.raises(UnsupportedLanguagePair) as refused:
        detected_route(two_pairs, texts, target)
    assert refused.value.code.status == 422 and detected in refused.value.message
    assert "en-zh, zh-en" in refused.value.message


def test_auto_detects_and_a_named_language_does_not(two_pairs):
    english = ["The weather is fine today."]
    assert choose_route(two_pairs, "auto", None, english) == (EN_ZH, detected_route(two_pairs, english, None)[1])
    assert choose_route(two_pairs, "zh", None, english) == (ZH_EN, None)  # named: no detection
    with pytest.raises(ValidationError) as refused:
        choose_route(two_pairs, "auto", "en", [])  # nothing to detect
    assert "source_lang" in refused.value.message


def test_a_documents_detected_route_waits_for_its_text(two_pairs):
    """A document's language is detected by the document stage once it is parsed: no route at submission."""
    assert document_route(two_pairs, "auto", None) is None
    assert document_route(two_pairs, "auto", "en") is None  # one pair fits, yet "auto" still detects
    assert document_route(two_pairs, None, None) is None  # several pairs fit and none is named
    assert document_route(two_pairs, "zh", None) == ZH_EN and document_route(two_pairs, None, "zh") == EN_ZH
    with pytest.raises(UnsupportedLanguagePair) as refused:
        document_route(two_pairs, "auto", "fr")  # no pair translates into French: refused now, not later
    assert "'fr'" in refused.value.message and "en-zh, zh-en" in refused.value.message


def test_overall_weighs_texts_by_their_characters():
    texts = ["aaaa", "bb"]
    assert overall(texts, [Detection("en", 1.0), Detection("fr", 1.0)]) == Detection("en", 4 / 6)
    assert overall(["12"], [Detection("", 0.0)]) == Detection("", 0.0)
    assert detect("") == Detection("", 0.0)

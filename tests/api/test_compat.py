"""The DeepL and LibreTranslate adapters (api/compat) on the real app and a real Redis, no worker: their
switch, key handling, error shapes and status codes, refusals, limits, back-pressure, glossaries and
per-key isolation. Their clients against a whole stack: tests/integration/compat."""

import json

import pytest
import requests

from tests.stack import ApiProcess, stack_settings

GOOD, OTHER = "good-key-1", "other-key-2"
DEEPL = {"Authorization": f"DeepL-Auth-Key {GOOD}"}
DEEPL_OTHER = {"Authorization": f"DeepL-Auth-Key {OTHER}"}


@pytest.fixture
def keyed(make_app):
    return make_app(api_keys=f"{GOOD},{OTHER}", key_id_secret="s", auth_failure_limit="").test_client()


def test_the_switch_turns_each_api_on_or_off(make_app):
    neither = make_app(compat_apis="").test_client()
    assert neither.get("/v2/usage").status_code == 404 and neither.get("/languages").status_code == 404
    assert not {"/v2/translate", "/translate"} & set(neither.get("/openapi.json").get_json()["paths"])
    deepl_only = make_app(compat_apis="deepl").test_client()
    assert deepl_only.get("/v2/usage").status_code == 200 and deepl_only.get("/languages").status_code == 404
    spec = make_app().test_client().get("/openapi.json").get_json()
    assert spec["paths"]["/v2/translate"]["post"]["tags"] == ["DeepL API v2"]
    assert spec["paths"]["/translate"]["post"]["tags"] == ["LibreTranslate API"]
    assert [tag["name"] for tag in spec["tags"]] == ["DeepL API v2", "LibreTranslate API"]
    with pytest.raises(ValueError, match="TRANSQ_COMPAT_APIS"):
        make_app(compat_apis="deepl,google")


def test_keys_where_each_api_puts_them_and_errors_in_its_shape(keyed):
    assert keyed.get("/v2/usage", headers=DEEPL).status_code == 200
    assert keyed.get("/v2/usage", headers={"Authorization": f"Bearer {GOOD}"}).status_code == 200
    for headers in ({}, {"Authorization": "DeepL-Auth-Key wrong"}):
        refused = keyed.get("/v2/usage", headers=headers)
        assert refused.status_code == 403 and set(refused.get_json()) == {"message"}
    refused = keyed.post("/detect", json={"q": "你好"})
    assert refused.status_code == 403 and set(refused.get_json()) == {"error"}
    assert keyed.post("/detect", json={"q": "你好", "api_key": GOOD}).status_code == 200
    assert keyed.post("/detect", data={"q": "你好", "api_key": GOOD}).status_code == 200
    assert keyed.post("/detect?api_key=" + GOOD, data={"q": "你好"}).status_code == 200
    assert keyed.get("/languages").status_code == 200 and keyed.get("/frontend/settings").status_code == 200
    # a body's api_key is LibreTranslate's only: transq's own calls do not read it
    assert keyed.post("/v1/detect", json={"text": "你好", "api_key": GOOD}).status_code == 401


def test_deepl_refuses_what_it_cannot_honour_before_any_job(keyed):
    cases = [
        ({"text": ["你好"]}, "target_lang"),
        ({"target_lang": "EN-US"}, "text"),
        ({"text": [1], "target_lang": "EN-US"}, "text"),
        ({"text": ["你好"], "target_lang": "EN-US", "formality": "less"}, "formality"),
        ({"text": ["你好"], "target_lang": "EN-US", "model_type": "quality_optimized"}, "model_type"),
        ({"text": ["你好"], "target_lang": "EN-US", "split_sentences": "2"}, "split_sentences"),
        ({"text": ["你好"], "target_lang": "EN-US", "preserve_formatting": "maybe"}, "preserve_formatting"),
        ({"text": ["你好"], "target_lang": "EN-US", "tag_handling": "markdown"}, "tag_handling"),
        ({"text": ["你好"], "target_lang": "EN-US", "custom_instructions": ["be brief"]}, "custom_instructions"),
        ({"text": ["你好"], "target_lang": "EN-US", "glossary_id": "0" * 32}, "source_lang"),
        ({"text": ["你好"], "target_lang": "FR"}, "fr"),
        ({"text": ["你好"] * 1001, "target_lang": "EN-US"}, "at most"),
    ]
    for body, named in cases:
        answer = keyed.post("/v2/translate", json=body, headers=DEEPL)
        assert answer.status_code == 400, (body, answer.get_json())
        assert named in answer.get_json()["message"], (body, answer.get_json())
    assert keyed.post("/v2/translate", data="{", content_type="application/json", headers=DEEPL).status_code == 400
    assert keyed.post("/v2/translate", data="x", content_type="text/csv", headers=DEEPL).status_code == 415
    huge = keyed.post("/v2/translate", data={"text": "你" * 400_000, "target_lang": "EN"}, headers=DEEPL)
    assert huge.status_code == 413 and "message" in huge.get_json()
    assert keyed.get("/v2/usage", headers=DEEPL).get_json()["character_count"] == 0  # none of it was charged


def test_back_pressure_is_503_with_retry_after_in_each_shape(make_app):
    app = make_app(max_queue=1, wait_timeout=0.2).test_client()  # no worker: the first job stays queued
    assert app.post("/v2/translate", json={"text": ["谢谢"], "target_lang": "EN-US"}).status_code == 504
    deepl = app.post("/v2/translate", json={"text": ["你好"], "target_lang": "EN-US"})
    assert deepl.status_code == 503 and deepl.headers["Retry-After"] and "message" in deepl.get_json()
    libre = app.post("/translate", json={"q": "你好", "source": "zh", "target": "en"})
    assert libre.status_code == 503 and libre.headers["Retry-After"] and "error" in libre.get_json()


def test_rate_limits_are_429_with_retry_after(redis_server, tmp_path):
    """Under gunicorn, as deployed (the limiter counts in the broker Redis)."""
    settings = stack_settings(redis_server.url, tmp_path / "no-model", rate_limit="2/minute")
    api = ApiProcess(settings, tmp_path / "api.log").start(workers=1)
    try:
        answers = [requests.get(api.url + "/v2/usage", timeout=10) for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 429]
        assert answers[2].headers["Retry-After"] and "message" in answers[2].json()
        detections = [requests.post(api.url + "/detect", json={"q": "你好"}, timeout=10) for _ in range(3)]
        limited = detections[2]
        assert limited.status_code == 429 and limited.headers["Retry-After"] and "error" in limited.json()
    finally:
        api.stop()


def test_a_job_not_done_in_the_wait_is_504_naming_it(make_app):
    app = make_app(wait_timeout=0.3).test_client()  # no worker
    answer = app.post("/v2/translate", json={"text": ["你好"], "target_lang": "EN-US"})
    assert answer.status_code == 504 and "/v1/jobs/" in answer.get_json()["message"]
    libre = app.post("/translate", json={"q": "谢谢", "source": "zh", "target": "en"})
    assert libre.status_code == 504 and "/v1/jobs/" in libre.get_json()["error"]


def test_deepl_glossaries_are_per_key(keyed):
    made = keyed.post(
        "/v2/glossaries",
        json={
            "name": "places",
            "source_lang": "ZH",
            "target_lang": "EN",
            "entries": "北京\tBeijing\n上海\tShanghai",
            "entries_format": "tsv",
        },
        headers=DEEPL,
    )
    assert made.status_code == 201, made.get_json()
    info = made.get_json()
    assert info["entry_count"] == 2 and (info["source_lang"], info["target_lang"]) == ("zh", "en") and info["ready"]
    gid = info["glossary_id"]
    entries = keyed.get(f"/v2/glossaries/{gid}/entries", headers=DEEPL)
    assert entries.content_type.startswith("text/tab-separated-values")
    assert sorted(entries.data.decode().splitlines()) == ["上海\tShanghai", "北京\tBeijing"]
    assert [g["glossary_id"] for g in keyed.get("/v2/glossaries", headers=DEEPL).get_json()["glossaries"]] == [gid]
    assert keyed.get(f"/v1/glossaries/{gid}", headers={"Authorization": f"Bearer {GOOD}"}).status_code == 200
    assert keyed.get(f"/v2/glossaries/{gid}", headers=DEEPL_OTHER).status_code == 404
    assert keyed.delete(f"/v2/glossaries/{gid}", headers=DEEPL_OTHER).status_code == 404
    assert keyed.get("/v2/glossaries", headers=DEEPL_OTHER).get_json() == {"glossaries": []}
    assert keyed.delete(f"/v2/glossaries/{gid}", headers=DEEPL).status_code == 204
    assert keyed.get(f"/v2/glossaries/{gid}", headers=DEEPL).status_code == 404


def test_deepl_glossary_refusals(keyed):
    good = {"name": "g", "source_lang": "ZH", "target_lang": "EN", "entries": "北京,Beijing", "entries_format": "csv"}
    assert keyed.post("/v2/glossaries", json=good, headers=DEEPL).status_code == 201
    bad = [
        ({"entries_format": "xlsx"}, "entries_format"),
        ({"entries": "北京"}, "entry 1"),
        ({"entries": "北京,Beijing\n北京,Peking"}, "duplicates"),
        ({"entries": "\n\n"}, "none"),
        ({"target_lang": "FR"}, "ZH-FR"),
        ({"name": "n" * 101}, "name"),
        ({"entries": "".join(f"t{i},x{i}\n" for i in range(100_000))}, ""),
    ]
    for change, named in bad:
        answer = keyed.post("/v2/glossaries", json={**good, **change}, headers=DEEPL)
        assert answer.status_code in (400, 413), (change, answer.get_json())
        assert named in answer.get_json()["message"]


def test_deepl_languages_and_usage(make_app):
    app = make_app(quota_chars_per_month=500).test_client()
    assert app.get("/v2/languages").get_json() == [{"language": "ZH", "name": "Chinese"}]
    assert app.get("/v2/languages?type=target").get_json() == [
        {"language": "EN", "name": "English", "supports_formality": False}
    ]
    assert app.get("/v2/languages", data={"type": "target"}).get_json()[0]["language"] == "EN"  # the client's GET body
    assert app.get("/v2/languages?type=both").status_code == 400
    usage = app.get("/v2/usage").get_json()
    assert (usage["character_count"], usage["character_limit"]) == (0, 500)


def test_document_ids_of_another_key_and_wrong_document_keys(keyed):
    import io

    up = keyed.post(
        "/v2/document", data={"file": (io.BytesIO("你好".encode()), "a.txt"), "target_lang": "EN-US"}, headers=DEEPL
    )
    assert up.status_code == 200, up.get_json()
    handle = up.get_json()
    url = f"/v2/document/{handle['document_id']}"
    assert (
        keyed.post(url, json={"document_key": handle["document_key"]}, headers=DEEPL).get_json()["status"] == "queued"
    )
    assert keyed.post(url, json={"document_key": "0" * 64}, headers=DEEPL).status_code == 404
    assert keyed.post(url, json={}, headers=DEEPL).status_code == 400
    assert keyed.post(url, json={"document_key": handle["document_key"]}, headers=DEEPL_OTHER).status_code == 404
    not_ready = keyed.post(url + "/result", json={"document_key": handle["document_key"]}, headers=DEEPL)
    assert not_ready.status_code == 503 and not_ready.headers["Retry-After"]
    refused = keyed.post(
        "/v2/document",
        data={"file": (io.BytesIO(b"x"), "a.txt"), "target_lang": "EN-US", "output_format": "pdf"},
        headers=DEEPL,
    )
    assert refused.status_code == 400 and "output_format" in refused.get_json()["message"]
    unknown = keyed.post(
        "/v2/document", data={"file": (io.BytesIO(b"x"), "a.pdf"), "target_lang": "EN-US"}, headers=DEEPL
    )
    assert unknown.status_code == 415 and "message" in unknown.get_json()


def test_libretranslate_shapes_and_refusals(keyed):
    auth = {"api_key": GOOD}
    detected = keyed.post("/detect", json={"q": "今天天气很好，我们去公园散步吧。", **auth}).get_json()
    assert detected[0]["language"] == "zh" and 0 < detected[0]["confidence"] <= 100
    languages = keyed.get("/languages").get_json()
    assert languages == [
        {"code": "en", "name": "English", "targets": []},
        {"code": "zh", "name": "Chinese", "targets": ["en"]},
    ]
    cases = [
        ({"source": "zh", "target": "en"}, "q"),
        ({"q": "你好", "target": "en"}, "source"),
        ({"q": "你好", "source": "zh", "target": "en", "alternatives": "many"}, "alternatives"),
        ({"q": "你好", "source": "zh", "target": "en", "format": "docx"}, "format"),
        ({"q": ["你好"] * 1001, "source": "zh", "target": "en"}, "at most"),
        ({"q": "你好", "source": "zh", "target": "de"}, "de"),
    ]
    for body, named in cases:
        answer = keyed.post("/translate", json={**body, **auth})
        assert answer.status_code == 400, (body, answer.get_json())
        assert named in answer.get_json()["error"]
    assert keyed.post("/translate_file", data={"source": "zh", "target": "en", **auth}).status_code == 400
    assert keyed.get(f"/download_file/{'0' * 32}/{'0' * 64}/a.txt").status_code == 404


def test_slow_bodies_are_cut_off_before_the_key_is_read(redis_server, tmp_path):
    """A LibreTranslate body carries its key, so it is read before the key check: bounded in time as every
    body is (408), in each API's shape, under gunicorn as deployed."""
    from tests.reliability.test_hostile_clients import raw_request

    settings = stack_settings(redis_server.url, tmp_path / "no-model", read_timeout=2.0, api_keys=GOOD)
    api = ApiProcess(settings, tmp_path / "api.log").start(workers=1)
    try:
        for path, kind, field in (
            ("/translate", "application/x-www-form-urlencoded", "error"),
            ("/v2/translate", "application/json", "message"),
        ):
            head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {kind}\r\nContent-Length: 100\r\n"
            if path.startswith("/v2"):
                head += f"Authorization: DeepL-Auth-Key {GOOD}\r\n"
            status, _, body = raw_request(api.port, head.encode() + b"\r\nq=", timeout=20)  # the rest never comes
            assert status == 408 and field in json.loads(body), (path, body)
    finally:
        api.stop()

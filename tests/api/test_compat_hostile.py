"""Hostile clients of the DeepL and LibreTranslate adapters (api/compat), on the real app and a real Redis, no
worker: parameters given twice or as lists where one value goes, keys presented twice with different values,
glossary terms their own export cannot hold, and DeepL's translation memory parameters."""

import io

import pytest
from werkzeug.datastructures import MultiDict

GOOD, OTHER = "good-key-1", "other-key-2"
DEEPL = {"Authorization": f"DeepL-Auth-Key {GOOD}"}
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def keyed(make_app):
    return make_app(
        api_keys=f"{GOOD},{OTHER}", key_id_secret="s", auth_failure_limit="", languages="zh-en"
    ).test_client()


def message(response, status, key="message"):
    assert response.status_code == status, response.get_data(as_text=True)
    return response.get_json()[key]


@pytest.mark.parametrize(
    "body",
    [
        {"text": ["你好"], "target_lang": ["EN", "DE"]},
        {"text": ["你好"], "target_lang": ["EN"]},
        {"text": ["你好"], "target_lang": "EN", "source_lang": "ZH", "glossary_id": ["a" * 32, "b" * 32]},
        {"text": ["你好"], "target_lang": "EN", "formality": ["default", "more"]},
    ],
)
def test_deepl_a_list_where_one_value_goes_is_refused(keyed, body):
    """A JSON array for a one-value parameter was read as its last item, silently (target_lang ["EN", "DE"]: DE)."""
    assert "not supported" in message(keyed.post("/v2/translate", json=body, headers=DEEPL), 400)


def test_deepl_a_form_parameter_given_twice_is_refused(keyed):
    """target_lang=EN&target_lang=DE was read as DE; `text` (a list in DeepL's API) may repeat."""
    twice = "text=%E4%BD%A0%E5%A5%BD&text=x&target_lang=EN&target_lang=DE"
    answer = keyed.post("/v2/translate", data=twice, headers={**DEEPL, "Content-Type": FORM})
    assert "'target_lang' is given more than once" in message(answer, 400)
    assert keyed.get("/v2/languages?type=source&type=target", headers=DEEPL).status_code == 400


def test_deepl_glossary_terms_its_tsv_cannot_hold_and_a_blank_name_are_refused(keyed):
    """A quoted CSV term with a line break or tab was stored, and GET .../entries (TSV) then showed other entries."""
    for entries in ('"北\nx",Beijing', '"北\tx",Beijing', '北京,"Bei\rjing"'):
        body = {"name": "g", "source_lang": "ZH", "target_lang": "EN", "entries": entries, "entries_format": "csv"}
        assert "entry 1" in message(keyed.post("/v2/glossaries", json=body, headers=DEEPL), 400)
    blank = {"name": "   ", "source_lang": "ZH", "target_lang": "EN", "entries": "北京\tBeijing"}
    assert "'name'" in message(keyed.post("/v2/glossaries", json=blank, headers=DEEPL), 400)
    assert keyed.get("/v2/glossaries", headers=DEEPL).get_json() == {"glossaries": []}


@pytest.mark.parametrize(
    "headers",
    [
        [("Authorization", f"DeepL-Auth-Key {GOOD}"), ("Authorization", f"DeepL-Auth-Key {OTHER}")],
        [("Authorization", f"DeepL-Auth-Key {GOOD}"), ("X-API-Key", OTHER)],
        [("Authorization", f"Bearer {GOOD}"), ("X-API-Key", OTHER)],
        [("Authorization", f"Bearer {OTHER}"), ("Authorization", f"DeepL-Auth-Key {GOOD}")],
    ],
)
def test_two_different_keys_are_no_key(keyed, headers):
    """Two keys, each valid, counted as whichever was read first: whose quota, glossaries and jobs it used
    depended on the order headers are read in."""
    assert keyed.get("/v2/usage", headers=headers).status_code == 403
    assert keyed.get("/v1/glossaries", headers=headers).status_code == 401
    same = [("Authorization", f"Bearer {GOOD}"), ("X-API-Key", GOOD)]
    assert keyed.get("/v1/glossaries", headers=same).status_code == 200


@pytest.mark.parametrize(
    "query, body",
    [
        (f"?api_key={OTHER}", {"q": "你好", "api_key": GOOD}),
        ("?api_key=wrong", {"q": "你好", "api_key": GOOD}),
        ("", {"q": "你好", "api_key": [GOOD, OTHER]}),
        (f"?api_key={GOOD}", {"q": "你好", "api_key": 1}),
    ],
)
def test_libretranslate_api_key_in_query_and_body_must_agree(keyed, query, body):
    """The body's api_key won over the query's, whatever the query said (a wrong key there went unnoticed)."""
    assert "API key" in message(keyed.post("/detect" + query, json=body), 403, "error")
    assert keyed.post(f"/detect?api_key={GOOD}", json={"q": "你好", "api_key": GOOD}).status_code == 200


def test_libretranslate_form_key_given_twice_is_no_key(keyed):
    twice = MultiDict([("q", "你好"), ("api_key", GOOD), ("api_key", OTHER)])
    assert keyed.post("/detect", data=twice).status_code == 403


@pytest.mark.parametrize("path, field", [("/v1/documents", "target_lang"), ("/v2/document", "target_lang")])
def test_a_document_form_field_given_twice_is_refused(keyed, path, field):
    form = MultiDict([(field, "en"), (field, "de"), ("file", (io.BytesIO("你好。".encode()), "a.txt"))])
    headers = DEEPL if path.startswith("/v2") else {"X-API-Key": GOOD}
    answer = keyed.post(path, data=form, headers=headers, content_type="multipart/form-data")
    assert answer.status_code in (400, 422) and field in answer.get_data(as_text=True)


def test_deepl_document_refuses_a_translation_memory(keyed):
    form = {"target_lang": "EN", "translation_memory_id": "0" * 32, "file": (io.BytesIO("你好。".encode()), "a.txt")}
    answer = keyed.post("/v2/document", data=form, headers=DEEPL, content_type="multipart/form-data")
    assert "translation_memory_id" in message(answer, 400)


def memory(keyed, key=GOOD):
    form = {"source_lang": "zh", "target_lang": "en", "file": (io.BytesIO("你好。\tHello there.\n".encode()), "m.tsv")}
    made = keyed.post("/v1/memories", data=form, headers={"X-API-Key": key}, content_type="multipart/form-data")
    assert made.status_code == 201, made.get_data(as_text=True)
    return made.get_json()["id"]


def test_deepl_translation_memory_id_is_transqs_translation_memory(keyed):
    """DeepL's translation_memory_id was refused; it is now passed on: an exact match answers with no worker."""
    mine = memory(keyed)
    body = {"text": ["你好。"], "source_lang": "ZH", "target_lang": "EN-US", "translation_memory_id": mine}
    answer = keyed.post("/v2/translate", json=body, headers=DEEPL)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["translations"][0]["text"] == "Hello there."
    form = (
        f"text=%E4%BD%A0%E5%A5%BD%E3%80%82&target_lang=EN&translation_memory_id={mine}&translation_memory_threshold=90"
    )
    assert keyed.post("/v2/translate", data=form, headers={**DEEPL, "Content-Type": FORM}).status_code == 200
    # another key's memory is unknown; bad thresholds and a threshold alone are named
    theirs = memory(keyed, OTHER)
    assert "no translation memory" in message(
        keyed.post("/v2/translate", json={**body, "translation_memory_id": theirs}, headers=DEEPL), 404
    )
    for threshold in (-1, 101, "many", [50], True):
        bad = {**body, "translation_memory_threshold": threshold}
        assert "translation_memory_threshold" in message(keyed.post("/v2/translate", json=bad, headers=DEEPL), 400)
    alone = {"text": ["你好。"], "target_lang": "EN", "translation_memory_threshold": 80}
    assert "translation_memory_id" in message(keyed.post("/v2/translate", json=alone, headers=DEEPL), 400)
    assert "translation_memory" in message(
        keyed.post("/v2/translate", json={**body, "translation_memory_id": "../x"}, headers=DEEPL), 400
    )


def test_keyless_downloads_count_against_the_address_rate_limit(make_app):
    """GET /download_file/... needs no key (its URL is its credential) and was exempt from every rate limit:
    any address could fetch documents, or try keys for them, without limit."""
    app = make_app(api_keys=GOOD, rate_limit="3/minute", auth_failure_limit="").test_client()
    url = "/download_file/" + "0" * 32 + "/" + "1" * 64 + "/a.en.txt"
    answers = [app.get(url) for _ in range(4)]
    assert [a.status_code for a in answers] == [404, 404, 404, 429]
    assert answers[3].headers["Retry-After"] and "error" in answers[3].get_json()
    assert all(app.get("/languages").status_code == 200 for _ in range(4))  # the lists stay open and unlimited

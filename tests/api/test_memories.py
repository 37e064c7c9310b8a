"""Translation memories through a real API process (gunicorn, real Redis, no worker): import, list, export and
delete, owned by the API key like glossaries; jobs answered from a memory's exact matches at submission;
corrections; and hostile imports and ids (entity expansion, external entities, too big, too many, malformed,
the wrong pair, another key's memory)."""

from pathlib import Path

import pytest
import requests

from api.memory_files import read_memory_file
from devstack.redis_server import RedisServer
from tests.stack import ApiProcess, stack_settings

FILES = Path(__file__).parent / "memory_files"
ALICE, BOB = {"X-API-Key": "alice-key"}, {"Authorization": "Bearer bob-key"}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("memories")
    with RedisServer() as server:
        settings = stack_settings(
            server.url,
            tmp / "no-model",
            api_keys="alice-key,bob-key",
            languages="zh-en",
            memory_max_bytes=8192,
            memory_max_entries=20,
            memory_max_stored=4,
            memory_max_per_job=2,
        )
        process = ApiProcess(settings, tmp / "api.log").start()
        try:
            yield process.url
        finally:
            process.stop()


@pytest.fixture
def clean(api):
    yield
    for headers in (ALICE, BOB):
        for found in requests.get(api + "/v1/memories", headers=headers, timeout=5).json()["memories"]:
            requests.delete(f"{api}/v1/memories/{found['id']}", headers=headers, timeout=5)


def upload(api, filename, data=None, headers=ALICE, **fields):
    data = (FILES / filename).read_bytes() if data is None else data
    form = {"source_lang": "zh", "target_lang": "en", **fields}
    return requests.post(api + "/v1/memories", files={"file": (filename, data)}, data=form, headers=headers, timeout=10)


def error(response, status):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return body["error"]["message"]


def test_import_list_export_delete_and_another_key_sees_nothing(api, clean):
    created = upload(api, "omegat.tmx", name="OmegaT project")
    assert created.status_code == 201, created.text
    memory = created.json()
    assert created.headers["Location"] == f"/v1/memories/{memory['id']}"
    assert memory["entry_count"] == 3 and memory["skipped"] == 0 and memory["name"] == "OmegaT project"
    listed = requests.get(api + "/v1/memories", headers=ALICE, timeout=5).json()["memories"]
    assert [m["id"] for m in listed] == [memory["id"]] and "skipped" not in listed[0]
    exported = requests.get(f"{api}/v1/memories/{memory['id']}", headers=ALICE, timeout=5)
    assert exported.status_code == 200 and exported.headers["Content-Type"].startswith("application/x-tmx+xml")
    again = read_memory_file(exported.content, "tmx", "zh", "en", 100, 2000)
    original = read_memory_file((FILES / "omegat.tmx").read_bytes(), "tmx", "zh", "en", 100, 2000)
    assert again.entries == original.entries
    assert requests.get(api + "/v1/memories", headers=BOB, timeout=5).json() == {"memories": []}
    error(requests.get(f"{api}/v1/memories/{memory['id']}", headers=BOB, timeout=5), 404)
    error(requests.delete(f"{api}/v1/memories/{memory['id']}", headers=BOB, timeout=5), 404)
    error(requests.get(f"{api}/v1/memories/../../etc", headers=ALICE, timeout=5), 404)
    assert requests.delete(f"{api}/v1/memories/{memory['id']}", headers=ALICE, timeout=5).status_code == 204
    error(requests.get(f"{api}/v1/memories/{memory['id']}", headers=ALICE, timeout=5), 404)


def test_a_job_is_answered_from_exact_matches_and_corrections_serve_the_next(api, clean):
    memory = upload(api, "omegat.tmx").json()
    texts = ["今天北京的天气很好。请在 周五之前 提交报告。"]
    body = {"texts": texts, "translation_memory": memory["id"]}
    job = requests.post(api + "/v1/jobs", json=body, headers=ALICE, timeout=10)
    assert job.status_code == 200, job.text  # every sentence held exactly: no worker needed
    view = job.json()
    assert view["result"]["translations"] == [
        "The weather in Beijing is fine today. Please submit the report by Friday."
    ]
    assert view["from_memory"] == 2 and view["cached_sentences"] == 0 and "suggestions" not in view
    fixed = {"translation_memory": memory["id"], "corrections": {"0": "Beijing has fine weather today."}}
    corrected = requests.post(f"{api}/v1/jobs/{view['id']}/corrections", json=fixed, headers=ALICE, timeout=5)
    assert corrected.status_code == 200, corrected.text
    assert corrected.json() == {"translation_memory": memory["id"], "added": 0, "updated": 1}
    next_job = requests.post(api + "/v1/jobs", json={"text": "今天北京的天气很好。", "translation_memory": [memory["id"]]},
                             headers=ALICE, timeout=10).json()  # fmt: skip
    assert next_job["result"]["translations"] == ["Beijing has fine weather today."]
    # another key cannot correct the job, nor use the memory; wrong indices and bodies are named
    error(requests.post(f"{api}/v1/jobs/{view['id']}/corrections", json=fixed, headers=BOB, timeout=5), 404)
    bad = {"translation_memory": memory["id"], "corrections": {"2": "x"}}
    assert "the job has 2 sentences" in error(
        requests.post(f"{api}/v1/jobs/{view['id']}/corrections", json=bad, headers=ALICE, timeout=5), 422
    )
    bad["corrections"] = {"first": "x"}
    error(requests.post(f"{api}/v1/jobs/{view['id']}/corrections", json=bad, headers=ALICE, timeout=5), 422)
    plain = requests.post(api + "/v1/jobs", json={"text": "你好。"}, headers=ALICE, timeout=10).json()
    assert "kept no source sentences" in error(
        requests.post(f"{api}/v1/jobs/{plain['id']}/corrections", json=fixed, headers=ALICE, timeout=5), 409
    )


def test_another_keys_memory_a_wrong_pair_and_bad_ids_in_a_job(api, clean):
    alices = upload(api, "omegat.tmx").json()
    english = upload(api, "pairs.tsv", data="hello.\t你好。\n".encode(), source_lang="en", target_lang="zh").json()
    job = {"text": "今天北京的天气很好。", "translation_memory": alices["id"]}
    assert "names no translation memory" in error(
        requests.post(api + "/v1/jobs", json=job, headers=BOB, timeout=5), 404
    )
    job["translation_memory"] = english["id"]
    assert "is a en-zh memory" in error(requests.post(api + "/v1/jobs", json=job, headers=ALICE, timeout=5), 422)
    for refused in ("not-an-id", ["a" * 32] * 3, [], 7, {"id": alices["id"]}):
        job["translation_memory"] = refused
        assert "translation_memory" in error(requests.post(api + "/v1/jobs", json=job, headers=ALICE, timeout=5), 422)
    job = {"text": "<p>今天北京的天气很好。</p>", "format": "html", "translation_memory": alices["id"]}
    assert "plain text jobs" in error(requests.post(api + "/v1/jobs", json=job, headers=ALICE, timeout=5), 422)
    job = {"text": "今天。", "translation_memory": alices["id"], "translation_memory_threshold": 101}
    error(requests.post(api + "/v1/jobs", json=job, headers=ALICE, timeout=5), 422)


@pytest.mark.parametrize(
    ("name", "status", "words"),
    [
        ("billion_laughs.tmx", 422, "entities"),
        ("external_entity.tmx", 422, "entities"),
        ("external_dtd_parameter.tmx", 422, "entities"),
        ("okapi.tmx", 201, ""),
    ],
)
def test_hostile_xml_is_refused_before_expansion(api, clean, name, status, words):
    response = upload(api, name)
    assert response.status_code == status, response.text
    if words:
        assert words in error(response, status)


def test_too_big_too_many_malformed_wrong_pair_and_the_cap(api, clean):
    assert "TRANSQ_MEMORY_MAX_BYTES" in error(upload(api, "big.tsv", data=b"a\tb\n" * 3000), 413)
    many = "".join(f"句子{i}。\tSentence {i}.\n" for i in range(21)).encode()
    assert "TRANSQ_MEMORY_MAX_ENTRIES" in error(upload(api, "many.tsv", data=many), 413)
    assert "not well-formed" in error(upload(api, "bad.tmx", data=b"<tmx><body><tu><tuv>"), 422)
    assert "no entry of the pair zh-de" in error(upload(api, "okapi.tmx", source_lang="zh", target_lang="de"), 422)
    assert "source_lang" in error(upload(api, "omegat.tmx", source_lang="chinese!"), 422)
    assert "format" in error(upload(api, "memory.xlsx", data=b"PK"), 422)
    not_a_form = requests.post(api + "/v1/memories", data=b"a\tb", headers=ALICE, timeout=5)
    assert "multipart/form-data" in error(not_a_form, 422)
    for _ in range(4):
        assert upload(api, "pairs.csv").status_code == 201
    assert "TRANSQ_MEMORY_MAX_STORED" in error(upload(api, "pairs.csv"), 409)
    assert upload(api, "pairs.csv", headers=BOB).status_code == 201  # another key's cap is its own


def test_the_web_page_offers_a_memory_menu(api):
    page = requests.get(api + "/", timeout=5).text
    assert 'id="memory"' in page and "memory.js" in page
    script = requests.get(api + "/static/memory.js", timeout=5)
    assert script.status_code == 200 and "translation_memory" in script.text

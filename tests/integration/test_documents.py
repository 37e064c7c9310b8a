"""Document jobs end to end: real API, Redis and worker with the offline model. Each format goes up as
a file and comes back with its structure identical (read by the format's own parser) and its text the
worker's translations; an edited document costs only its new sentences; a document longer than a round
may run finishes over several rounds; a translation that loops is made again and flagged."""

import io
import subprocess
import sys
import time

import pytest
import requests

from tests.api.documents import samples
from tests.api.documents.shapes import docx_shape, html_shape, markdown_shape, srt_shape
from tests.conftest import Stack
from tests.stack import ROOT
from worker.translation.model.output_guard import problem

pytestmark = pytest.mark.slow


def upload(stack, name: str, data: bytes, **fields) -> dict:
    response = requests.post(
        stack.api.url + "/v1/documents", files={"file": (name, io.BytesIO(data))}, data=fields, timeout=10
    )
    assert response.status_code in (200, 202), response.text
    return response.json()


def download(stack, job_id: str) -> requests.Response:
    response = requests.get(f"{stack.api.url}/v1/jobs/{job_id}/document", timeout=10)
    assert response.status_code == 200, response.text
    return response


def translation_of(stack, sentence: str) -> str:
    return stack.client.wait(stack.client.submit([sentence])["id"])["result"]["translations"][0]


@pytest.mark.parametrize(
    "name, data, shape",
    [
        ("page.html", samples.HTML.encode(), lambda b: html_shape(b.decode())),
        ("notes.md", samples.MARKDOWN.encode(), lambda b: markdown_shape(b.decode())),
        ("film.srt", samples.SRT.encode(), lambda b: srt_shape(b.decode())),
        ("report.docx", samples.docx_bytes(), docx_shape),
    ],
)
def test_each_format_comes_back_with_its_structure(stack, name, data, shape):
    job = stack.client.wait(upload(stack, name, data)["id"])
    assert job["status"] == "succeeded", job
    response = download(stack, job["id"])
    stem, extension = name.rsplit(".", 1)
    named = f"{stem}.en.{extension}"
    assert response.headers["Content-Disposition"] == f"attachment; filename=\"{named}\"; filename*=UTF-8''{named}"
    assert shape(response.content) == shape(data)
    if extension != "docx":
        assert job["result"]["translations"] == [response.content.decode()]
        assert job["result"]["document_url"] == f"/v1/jobs/{job['id']}/document"


def test_a_documents_text_is_the_workers_translation_of_its_sentences(stack):
    page = "<html><body><p>文档里的第一句话。</p><p>文档里的第二句话。</p></body></html>"
    job = stack.client.wait(upload(stack, "two.html", page.encode())["id"])
    output = download(stack, job["id"]).text
    first, second = translation_of(stack, "文档里的第一句话。"), translation_of(stack, "文档里的第二句话。")
    assert output == f"<html><body><p>{first}</p><p>{second}</p></body></html>".replace("&", "&amp;")


def test_json_job_with_a_format_returns_documents(stack):
    job = stack.client.submit([samples.MARKDOWN], source_lang="zh", target_lang="en")
    body = {"texts": [samples.MARKDOWN, "# 第二个文档\n"], "format": "markdown"}
    job = requests.post(stack.api.url + "/v1/jobs", json=body, timeout=10).json()
    job = stack.client.wait(job["id"])
    documents = job["result"]["translations"]
    assert [markdown_shape(d) for d in documents] == [markdown_shape(t) for t in body["texts"]]
    response = requests.get(f"{stack.api.url}/v1/jobs/{job['id']}/document", timeout=10)
    assert response.status_code == 409  # two documents: they are in the job's result


def test_an_edited_document_translates_only_its_new_sentences(stack):
    sentences = [f"第{i}段的内容是关于编辑测试的。" for i in range(40)]
    original = "\n\n".join(sentences)
    first = stack.client.wait(upload(stack, "long.txt", original.encode())["id"])
    assert first["status"] == "succeeded" and first["progress"]["sentences_total"] == 40
    edited = sentences[:]
    for i in (3, 17, 31, 38):
        edited[i] = f"这是第{i}段修改后的新内容。"
    translated_before = stack.stat("sentences_translated")
    second = stack.client.wait(upload(stack, "long.txt", "\n\n".join(edited).encode())["id"])
    assert second["status"] == "succeeded"
    assert second["cached_sentences"] == 36
    assert stack.stat("sentences_translated") == translated_before + 4
    assert download(stack, second["id"]).text.count("\n\n") == 39


def test_a_document_longer_than_a_round_finishes_over_several_rounds(make_stack):
    s = make_stack(
        task_soft_time_limit=6, task_time_limit=12, visibility_timeout=30, max_batch_sentences=2, test_hooks=True
    )
    text = "\n".join(f"第{i}句需要一点时间 TRANSQ-SLEEP1。" for i in range(12))  # 6 batches of 1 s: 2 rounds at least
    started = time.monotonic()
    job = s.client.wait(upload(s, "slow.txt", text.encode())["id"], timeout=120)
    assert job["status"] == "succeeded", job
    assert time.monotonic() - started > 6  # longer than the task's soft time limit
    assert job["progress"]["sentences_done"] == 12
    assert "half its time limit" in (s.tmp / "w1.log").read_text()


@pytest.fixture(scope="module")
def looping_model(tmp_path_factory):
    from worker.translation.model.offline_model import make_test_model

    return make_test_model(tmp_path_factory.mktemp("looping") / "tiny", behaviour="random")


def test_a_looping_translation_is_made_again_and_flagged(tmp_path, looping_model):
    s = Stack(tmp_path, looping_model, max_new_tokens=64)
    try:
        s.start()
        looped = "一个会让模型重复的句子。"
        job = s.client.wait(s.client.submit(["正常的一句话。" + looped])["id"], timeout=120)
        assert job["status"] == "succeeded"
        warnings = job["warnings"]
        assert {w["code"] for w in warnings} == {"degenerate_output"} and {w["sentence"] for w in warnings} <= {0, 1}
        translation = job["result"]["translations"][0]
        for warning in warnings:
            if "still" not in warning["message"]:
                assert problem(looped, translation.split(" ")[-1]) is None
        assert s.stat("degenerate_translations") >= 1
        still_bad = any("still" in w["message"] for w in warnings)
        again = requests.post(s.api.url + "/v1/jobs", json={"text": "正常的一句话。" + looped}, timeout=10)
        # a translation still degenerate after its retry is not cached: the next job asks the model again
        assert (again.status_code == 202) == still_bad
    finally:
        s.close()


@pytest.mark.parametrize("name, data", [("notes.md", samples.MARKDOWN.encode()), ("report.docx", samples.docx_bytes())])
def test_the_cli_translates_a_document_into_the_same_format(stack, tmp_path, name, data):
    source, output = tmp_path / name, tmp_path / ("out" + name[name.index(".") :])
    source.write_bytes(data)
    command = [
        sys.executable,
        "-m",
        "transq_cli.main",
        "translate",
        str(source),
        "-o",
        str(output),
        "--url",
        stack.api.url,
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    shape = docx_shape if name.endswith(".docx") else lambda b: markdown_shape(b.decode())
    assert shape(output.read_bytes()) == shape(data)


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("broken.docx", b"PK\x03\x04 broken", "docx"),
        ("bad.srt", b"1\nno timing here\n", "SubRip"),
    ],
)
def test_a_malformed_document_fails_its_job_invalid_document(stack, name, data, message):
    """What only parsing finds is found by the document stage: the upload is accepted (`parsing`), its job
    fails `invalid_document` (moved here from tests/api: the API no longer parses)."""
    accepted = upload(stack, name, data)
    assert accepted["status"] == "parsing"
    job = stack.client.wait(accepted["id"])
    assert job["status"] == "failed" and job["error"]["code"] == "invalid_document", job
    assert message in job["error"]["message"]


def test_a_json_document_job_is_parsed_by_the_stage(stack):
    bad = requests.post(stack.api.url + "/v1/jobs", json={"text": "1\nnot a timing\n", "format": "srt"}, timeout=10)
    assert bad.status_code == 202 and bad.json()["status"] == "parsing"
    job = stack.client.wait(bad.json()["id"])
    assert job["error"]["code"] == "invalid_document" and "SubRip" in job["error"]["message"]
    good = requests.post(stack.api.url + "/v1/jobs", json={"texts": [samples.HTML], "format": "html"}, timeout=10)
    job = stack.client.wait(good.json()["id"])
    assert job["status"] == "succeeded" and 10 <= job["progress"]["sentences_total"] <= 30  # its text, not markup


def test_a_document_with_nothing_to_translate_is_done_by_the_stage(stack):
    accepted = upload(stack, "images.html", b"<p><img src=a.png></p>")
    job = stack.client.wait(accepted["id"])
    assert job["status"] == "succeeded" and job["result"]["translations"] == ["<p><img src=a.png></p>"]
    assert download(stack, job["id"]).content == b"<p><img src=a.png></p>"


def test_a_document_jobs_data_is_kept_compressed_and_only_while_needed(stack):
    """The job goes parsing -> queued -> running -> rendering -> succeeded; once it has succeeded the broker
    holds its translated document (compressed, TRANSQ_DOCUMENT_TTL), not its source, texts or units."""
    job = stack.client.wait(upload(stack, "notes.md", samples.MARKDOWN.encode())["id"])
    assert job["status"] == "succeeded"
    prefix = stack.settings.key_prefix
    record = stack.r.hgetall(f"{prefix}job:{job['id']}")
    assert "texts" not in record and "result" not in record and record["status"] == "succeeded"
    assert stack.r.exists(f"{prefix}docsrc:{job['id']}") == 0
    assert 0 < stack.r.ttl(f"{prefix}docout:{job['id']}") <= stack.settings.document_ttl
    assert 0 < stack.r.ttl(f"{prefix}job:{job['id']}") <= stack.settings.document_ttl

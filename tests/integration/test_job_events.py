"""GET /v1/jobs/<id>/events on a real stack, read with a real SSE client (sseclient-py): every sentence as the
worker records it, progress, `done` with the job's view; a reconnect with Last-Event-ID mid-job misses and
repeats nothing; cached sentences answered at submission are events too; a document announces its download;
`transq translate --stream` prints the sentences."""

import json
import os
import subprocess
import sys

import pytest
import requests
import sseclient

from tests.reliability.conftest import slow_text
from tests.stack import ROOT

pytestmark = pytest.mark.slow


def stream(s, job_id, last_event_id="", api_key=""):
    headers = {"Accept": "text/event-stream"}
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    response = requests.get(f"{s.api.url}/v1/jobs/{job_id}/events", headers=headers, stream=True, timeout=30)
    return response, sseclient.SSEClient(response)


def read_all(s, job_id, last_event_id=""):
    response, client = stream(s, job_id, last_event_id)
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/event-stream")
    events = [(e.id, e.event, json.loads(e.data)) for e in client.events()]
    response.close()
    return events


def sentences(events):
    return {d["index"]: d["translation"] for _, kind, d in events if kind == "sentence"}


@pytest.fixture
def hooked(make_stack):
    """One sentence per batch, and a worker that sleeps on a marked sentence: a job lasts long enough to
    reconnect in its middle."""
    return make_stack(test_hooks=True, max_batch_sentences=1)


def test_a_reconnect_with_last_event_id_mid_job_misses_nothing_and_repeats_nothing(hooked):
    s = hooked
    texts = ["".join(slow_text(1, f"第{i}句") for i in range(3)) + "你好。再见。", "谢谢。"]
    job = s.client.submit(texts, scores=True)
    response, client = stream(s, job["id"])
    first = []
    for event in client.events():
        first.append((event.id, event.event, json.loads(event.data)))
        if event.event == "sentence":
            break  # mid-job: the first sentence recorded, the rest to come
    response.close()
    rest = read_all(s, job["id"], last_event_id=first[-1][0])
    events = first + rest
    ids = [i for i, _, _ in events if i]
    assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-")))) and len(set(ids)) == len(ids)
    kind, view = events[-1][1], events[-1][2]
    assert kind == "done" and view == s.client.job(job["id"]) and view["status"] == "succeeded"
    found = sentences(events)
    assert sorted(found) == list(range(view["progress"]["sentences_total"]))  # each sentence once, none missed
    assert all("score" in d for _, k, d in events if k == "sentence")  # the job asked for scores
    progress = [d for _, k, d in events if k == "progress"]
    assert [p["status"] for p in progress][0] == "queued" and progress[-1]["status"] == "succeeded"
    assert [p["sentences_done"] for p in progress] == sorted(p["sentences_done"] for p in progress)
    # After `done`, a reconnect from its last id gets `done` again, and nothing else
    again = read_all(s, job["id"], last_event_id=ids[-1])
    assert [k for _, k, _ in again] == ["done"]


def test_cached_sentences_answered_at_submission_are_events(stack):
    texts = ["今天天气很好。我们去公园吧。"]
    stack.client.wait(stack.client.submit(texts)["id"])
    cached = stack.client.submit(texts + ["这是一个新的句子。"])  # two sentences cached, one new
    events = read_all(stack, cached["id"])
    kinds = [k for _, k, _ in events]
    assert kinds[:3] == ["sentence", "sentence", "progress"]  # in the submission's own script, before any worker
    assert events[2][2]["sentences_done"] == 2 and events[2][2]["status"] == "queued"
    assert sorted(sentences(events)) == [0, 1, 2] and kinds[-1] == "done"
    whole = stack.client.submit(texts)  # every sentence cached: answered at once, its events there already
    assert whole["status"] == "succeeded"
    assert [k for _, k, _ in read_all(stack, whole["id"])] == ["sentence", "sentence", "progress", "done"]


def test_a_document_announces_its_download_before_done(stack):
    job = stack.client.upload("notes.md", "# 标题\n\n你好。再见。\n".encode(), source_lang="zh", target_lang="en")
    events = read_all(stack, job["id"])
    kinds = [k for _, k, _ in events]
    assert kinds[-3:] == ["document", "progress", "done"] and kinds.count("document") == 1
    assert events[-3][2] == {"download": f"/v1/jobs/{job['id']}/document"} and events[-2][2]["status"] == "succeeded"
    statuses = [d["status"] for _, k, d in events if k == "progress"]
    assert statuses[0] == "parsing" and "rendering" in statuses and statuses[-1] == "succeeded"
    assert sentences(events) and requests.get(stack.api.url + events[-3][2]["download"], timeout=10).ok


def test_the_cli_prints_each_sentence_as_it_arrives(stack, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("早上好。晚上好。\n\n明天见。\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "transq_cli.main", "translate", str(source), "--stream", "--url", stack.api.url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "\t" in line]
    assert sorted(int(line.split("\t")[0]) for line in lines) == [0, 1, 2]
    assert "[succeeded: 3/3 sentences]" in done.stderr and done.stdout.strip()


def test_done_is_the_same_view_as_get_with_a_server_wide_gate(make_stack):
    """With TRANSQ_MIN_CONFIDENCE set (the job sets none), `done` carries the job's `quality_gate` as
    GET /v1/jobs/<id> does (it once left it out: the stream built the view without the server's gate)."""
    s = make_stack(min_confidence=-1e-9)  # above any score of the copy model: every sentence is gated
    job = s.client.submit(["今天天气很好。"])
    done = [d for _, kind, d in read_all(s, job["id"]) if kind == "done"][0]
    assert done["quality_gate"]["retried"] == 1 and done["quality_gate"]["min_confidence"] == -1e-9
    assert done == s.client.job(job["id"])

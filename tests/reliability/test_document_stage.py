"""Hostile documents never reach the API's request workers; one client never fills the broker.

Real gunicorn (gevent), Redis, translation worker and document stage (worker.documents.stage). Documents are
parsed and rendered by the document stage, in its own process with its own time and memory limits: while
it chews on documents made heavy for the parsers, the API keeps answering and other clients' jobs
finish; a document over the stage's limits fails `document_too_complex` and the stage goes on working.
Each client's bytes in the broker are accounted: the issue's attack (4 MiB uploads whose one sentence is
cached) is refused for that client with `storage_quota_exceeded` while another still gets 202, and the
broker's memory stays bounded.
"""

import base64
import io
import os
import threading
import time

import pytest
import requests

pytestmark = pytest.mark.slow


def upload(url: str, name: str, data: bytes, key: str | None = None, timeout: float = 60) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return requests.post(
        url + "/v1/documents", files={"file": (name, io.BytesIO(data))}, headers=headers, timeout=timeout
    )


def nested_inline_tags(depth: int) -> bytes:
    """Thousands of open inline tags, then as many stray closing ones: quadratic for the HTML parser."""
    return ("<p>" + "<b>字" * depth + "</i>" * depth + "</p>").encode()


def many_paragraphs(size: int) -> bytes:
    """A Markdown file of `size` bytes of tiny paragraphs: hundreds of thousands of tokens and runs."""
    return ("句。\n\n" * (size // 8)).encode()


def wait_job(url: str, job_id: str, timeout: float = 120, key: str | None = None) -> dict:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    deadline = time.monotonic() + timeout
    while True:
        job = requests.get(f"{url}/v1/jobs/{job_id}", headers=headers, timeout=10).json()
        if job["status"] in ("succeeded", "failed", "cancelled") or time.monotonic() > deadline:
            return job
        time.sleep(0.1)


def test_the_api_answers_while_heavy_documents_are_parsed(make_stack):
    """Two documents that cost the HTML parser seconds of CPU each (one per gunicorn process, when it
    parsed them) are uploaded; meanwhile /healthz and POST /v1/jobs answer within 1 s, and a plain job
    and a small document of another client succeed."""
    s = make_stack(document_time_limit=120)
    url = s.api.url
    heavy = nested_inline_tags(8000)
    accepted: list[requests.Response] = []
    senders = [
        threading.Thread(target=lambda name=name: accepted.append(upload(url, name, heavy, timeout=120)))
        for name in ("heavy1.html", "heavy2.html")
    ]
    for sender in senders:
        sender.start()
    time.sleep(0.5)  # the uploads are in: under the old code, both API processes are now parsing
    slowest, plain_ids = 0.0, []
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline:
        started = time.monotonic()
        assert requests.get(url + "/healthz", timeout=10).status_code == 200
        response = requests.post(url + "/v1/jobs", json={"text": f"另一个客户的句子{len(plain_ids)}。"}, timeout=10)
        assert response.status_code in (200, 202), response.text
        plain_ids.append(response.json()["id"])
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.2)
    for sender in senders:
        sender.join(timeout=120)
    assert slowest < 1.0, f"the API took {slowest:.2f}s to answer /healthz and POST /v1/jobs"
    assert [r.status_code for r in accepted] == [202, 202]  # accepted at once, parsed by the stage
    assert all(r.json()["status"] == "parsing" for r in accepted)
    for job_id in plain_ids:
        assert wait_job(url, job_id)["status"] == "succeeded"
    small = upload(url, "small.md", "# 标题\n\n另一个文档。\n".encode())
    assert wait_job(url, small.json()["id"], timeout=300)["status"] == "succeeded"
    for response in accepted:
        assert wait_job(url, response.json()["id"], timeout=300)["status"] == "succeeded"


@pytest.mark.parametrize(
    "limits",
    [
        dict(document_time_limit=3, document_memory_mb=4096, max_document_parts=10**9),
        dict(document_time_limit=300, document_memory_mb=150, max_document_parts=10**9),
    ],
    ids=["time", "memory"],
)
def test_a_document_over_the_stages_limits_fails_and_the_stage_keeps_working(make_stack, limits):
    """A 4 MB Markdown file of tiny paragraphs (the parts limit lifted: the stage's own limits are tested)
    needs far more than 3 s, or 150 MiB, to parse: its job fails
    `document_too_complex` (a 4xx code) while the API answers; the next document is translated."""
    s = make_stack(**limits)
    url = s.api.url
    response = upload(url, "huge.md", many_paragraphs(4_000_000))
    assert response.status_code == 202, response.text
    started = time.monotonic()
    while time.monotonic() - started < 2:
        probe = time.monotonic()
        assert requests.get(url + "/healthz", timeout=10).status_code == 200
        assert time.monotonic() - probe < 1.0
        time.sleep(0.2)
    job = wait_job(url, response.json()["id"], timeout=120)
    assert job["status"] == "failed", job
    assert job["error"]["code"] == "document_too_complex", job["error"]
    assert "TRANSQ_DOCUMENT_" in job["error"]["message"]
    assert requests.get(f"{url}/v1/jobs/{job['id']}/document", timeout=10).status_code == 409
    after = upload(url, "after.md", "# 之后\n\n文档服务还在工作。\n".encode())
    assert wait_job(url, after.json()["id"], timeout=120)["status"] == "succeeded"
    assert s.documents.process.poll() is None  # the same stage, still running
    assert s.r.get(f"{s.settings.key_prefix}docsrc:{job['id']}") is None  # the failed job's source is gone


def test_one_client_cannot_fill_the_broker_with_cached_uploads(make_stack):
    """The issue's attack: 4 MiB uploads whose one sentence is cached (so each finishes at once). Each
    client may hold TRANSQ_CLIENT_STORAGE_BYTES; past it the attacker gets 429 `storage_quota_exceeded`
    saying what frees it, another client still gets 202, and the broker's memory stays bounded."""
    limit = 16 * 2**20
    s = make_stack(api_keys="attacker,neighbour", client_storage_bytes=limit, max_document_bytes=4 * 2**20)
    url = s.api.url
    sentence = "这句话已经翻译过了。"
    cached = requests.post(
        url + "/v1/jobs", json={"text": sentence}, headers={"Authorization": "Bearer attacker"}, timeout=10
    )
    assert wait_job(url, cached.json()["id"], key="attacker")["status"] == "succeeded"
    baseline = int(s.r.info("memory")["used_memory"])
    # An inline image: hardly compressible, nothing to translate; the upload is just under 4 MiB.
    noise = base64.b64encode(os.urandom(3_000_000)).decode()
    page = f"<p>{sentence}</p><img src='data:image/png;base64,{noise}'>".encode()
    statuses, refusal = [], None
    for i in range(24):
        response = upload(url, f"attack{i}.html", page, key="attacker")
        statuses.append(response.status_code)
        if response.status_code == 429:
            refusal = response
        elif response.status_code == 202:
            wait_job(url, response.json()["id"], key="attacker")
    assert refusal is not None, statuses
    error = refusal.json()["error"]
    assert error["code"] == "storage_quota_exceeded"
    assert "expire" in error["message"] and "TRANSQ_CLIENT_STORAGE_BYTES" in error["message"]
    assert int(refusal.headers["Retry-After"]) > 0
    assert statuses.count(202) >= 2 and set(statuses) == {202, 429}, statuses
    neighbour = upload(url, "mine.md", "# 邻居\n\n邻居的文档。\n".encode(), key="neighbour")
    assert neighbour.status_code == 202, neighbour.text
    assert wait_job(url, neighbour.json()["id"], key="neighbour", timeout=120)["status"] == "succeeded"
    used = int(s.r.info("memory")["used_memory"])
    assert used - baseline < limit + 8 * 2**20, f"the broker grew by {(used - baseline) / 2**20:.0f} MiB"

"""RELIABILITY 67-69 through gunicorn, the document stage and a real worker: a malformed upload is a clear 4xx
(never 500) or, where only parsing finds it, a job failed `invalid_document`; a hostile document's job fails
`document_too_complex` in the document stage, within its limits, while the API keeps answering, and the
download's headers are bounded and clean; HTML pages carry nosniff, a CSP and frame protection."""

import io
import re
import time
import zipfile

import pytest
import requests

from bench import hostile_documents as hostile

pytestmark = pytest.mark.slow


def post(stack, data: bytes, content_type: str, query: str = "") -> requests.Response:
    return requests.post(
        f"{stack.api.url}/v1/documents{query}", data=data, headers={"Content-Type": content_type}, timeout=60
    )


def assert_error(response: requests.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code and response.json()["error"]["message"]


def test_67_malformed_uploads_are_4xx(stack):
    part = b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n' + "你好。".encode()
    assert_error(post(stack, part + b"\r\n--xyz--\r\n", "multipart/form-data"), 400, "bad_request")  # no boundary
    assert_error(post(stack, part, "multipart/form-data; boundary=xyz"), 400, "bad_request")  # truncated
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("hello.txt", "你好")
    response = requests.post(
        stack.api.url + "/v1/documents", files={"file": ("not-word.docx", archive.getvalue())}, timeout=30
    )
    assert response.status_code == 202, response.text  # a zip: only the document stage looks inside
    job = stack.client.wait(response.json()["id"], timeout=120)
    assert job["status"] == "failed" and job["error"]["code"] == "invalid_document", job
    assert "word/document.xml" in job["error"]["message"]


@pytest.mark.parametrize(
    "name, data",
    [
        ("bomb.docx", hostile.docx_bomb()),
        ("runs.docx", hostile.docx_runs(200_000)),
        ("floods.html", hostile.html_stray_closes(1 << 20)),
        ("table.md", hostile.markdown_table(30_000)),
    ],
)
def test_68_hostile_documents_are_refused_as_too_complex(stack, name, data):
    started = time.monotonic()
    response = requests.post(stack.api.url + "/v1/documents", files={"file": (name, data)}, timeout=120)
    assert response.status_code == 202, response.text
    assert requests.get(stack.api.url + "/healthz", timeout=10).status_code == 200
    job = stack.client.wait(response.json()["id"], timeout=120)
    assert job["status"] == "failed" and job["error"]["code"] == "document_too_complex", job
    assert "TRANSQ_" in job["error"]["message"]  # names the setting that would allow it
    assert job["progress"]["sentences_total"] == 0  # refused while it was read, nothing queued to translate
    assert time.monotonic() - started < 60  # liveness only (it used to take minutes or gigabytes)


def test_69_download_name_is_bounded_and_clean(stack):
    named = "\u202egpj.\x00" + "x" * 300 + "/../x\u200b.md"  # in the query: NUL, bidi override, a path
    bare = post(stack, "第一句。".encode(), "text/markdown", "?filename=" + requests.utils.quote(named))
    long_name = "\u202e" + "报告" * 5000 + ".md"  # in the form: 30 KB of name
    form = requests.post(stack.api.url + "/v1/documents", files={"file": (long_name, "第二句。".encode())}, timeout=30)
    for response in (bare, form):
        assert response.status_code in (200, 202), response.text
        stack.client.wait(response.json()["id"])
        download = requests.get(f"{stack.api.url}/v1/jobs/{response.json()['id']}/document", timeout=30)
        assert download.status_code == 200
        disposition = download.headers["Content-Disposition"]
        assert len(disposition) < 1200
        plain = re.search(r'filename="([^"]*)"', disposition).group(1)  # what curl -OJ saves as
        assert plain.isascii() and plain.endswith(".en.md") and "/" not in plain and not plain.startswith(".")
        decoded = requests.utils.unquote(re.search(r"filename\*=UTF-8''(\S+)", disposition).group(1))
        assert len(decoded) <= 100 and decoded.endswith(".en.md")
        assert not any(ch in decoded for ch in "\x00\u202e\u200b/\\")
        assert download.headers["Content-Type"] == "text/markdown; charset=utf-8"  # the charset named once


def test_69_html_pages_carry_nosniff_csp_and_frame_protection(stack):
    for path in ("/", "/docs"):
        response = requests.get(stack.api.url + path, timeout=10)
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["X-Frame-Options"] == "DENY"
        policy = response.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
        assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    page = requests.get(stack.api.url + "/", timeout=10).text
    assert "<script>" not in page and " style=" not in page  # nothing inline that the policy would block
    assert requests.get(stack.api.url + "/v1/languages", timeout=10).headers["X-Content-Type-Options"] == "nosniff"

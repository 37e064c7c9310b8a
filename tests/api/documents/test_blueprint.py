"""Document jobs at the HTTP boundary (no worker, no document stage): what is accepted (a job that waits
`parsing` for the document stage, which parses it off the request path), and every refusal the API itself
makes in the contract's shape (415 for a file type transq does not read, 422 for one that is not even
text or a zip, 413 over the limit, 429 over the client's storage; never 500). What the document stage
refuses (a malformed document, one too complex) is in tests/integration/test_documents.py and
tests/reliability/test_document_stage.py."""

import io
import os

import pytest

from tests.api.documents import samples


def upload(client, name, data, **fields):  # type: ignore[no-untyped-def]
    form = {"file": (io.BytesIO(data), name), **fields}
    return client.post("/v1/documents", data=form, content_type="multipart/form-data")


def test_json_job_with_a_format_translates_the_documents_text_only(client):
    response = client.post("/v1/jobs", json={"texts": [samples.HTML], "format": "html"})
    assert response.status_code == 202, response.json
    job = response.json
    assert job["format"] == "html" and job["document"]["download"] == f"/v1/jobs/{job['id']}/document"
    assert job["status"] == "parsing" and job["progress"]["sentences_total"] == 0  # the stage parses it


@pytest.mark.parametrize(
    "name, data, fmt",
    [
        ("notes.md", samples.MARKDOWN.encode(), "markdown"),
        ("page.HTML", samples.HTML.encode(), "html"),
        ("film.srt", samples.SRT.encode("utf-8-sig"), "srt"),
        ("report.docx", samples.docx_bytes(), "docx"),
        ("plain.txt", "第一段。\n\n第二段。".encode("utf-16"), "text"),
    ],
)
def test_uploaded_documents_become_jobs(client, name, data, fmt):
    response = upload(client, name, data)
    assert response.status_code == 202, response.json
    assert response.headers["Location"] == f"/v1/jobs/{response.json['id']}"
    assert response.json["format"] == fmt and response.json["document"]["filename"] == name
    again = client.get(response.headers["Location"]).json
    assert again["status"] == "parsing" and again["format"] == fmt


def test_a_bare_body_upload_takes_its_format_from_the_content_type(client):
    response = client.post(
        "/v1/documents?filename=x", data=samples.MARKDOWN.encode(), content_type="text/markdown; charset=utf-8"
    )
    assert response.status_code == 202 and response.json["format"] == "markdown"


@pytest.mark.parametrize(
    "request_kwargs, status, code",
    [
        (dict(name="slides.pdf", data=b"%PDF-1.4"), 415, "unsupported_media_type"),
        (dict(name="renamed.docx", data=samples.MARKDOWN.encode()), 422, "invalid_document"),
        (dict(name="latin1.txt", data="caf\xe9".encode("latin-1")), 422, "invalid_document"),
        (dict(name="empty.md", data=b"   \n"), 422, "validation_error"),
        (dict(name="x.md", data=b"# ok", format="pdf"), 422, "validation_error"),
    ],
)
def test_unreadable_documents_are_refused_in_the_contract_shape(client, request_kwargs, status, code):
    fields = {k: v for k, v in request_kwargs.items() if k not in ("name", "data")}
    response = upload(client, request_kwargs["name"], request_kwargs["data"], **fields)
    assert response.status_code == status, response.json
    assert response.json["error"]["code"] == code and response.json["error"]["message"]


def test_a_form_without_a_file_and_a_document_over_the_limit(make_app):
    client = make_app(max_document_bytes=1000).test_client()
    response = client.post("/v1/documents", data={"format": "text"}, content_type="multipart/form-data")
    assert response.status_code == 422 and "file" in response.json["error"]["message"]
    response = upload(client, "big.txt", "很长的句子。".encode() * 200)
    assert response.status_code == 413 and response.json["error"]["code"] == "payload_too_large"


@pytest.mark.parametrize(
    "body, message",
    [
        ({"text": "x", "format": "docx"}, "/v1/documents"),
        ({"text": "x", "format": "pdf"}, "format must be one of"),
    ],
)
def test_json_jobs_with_a_bad_format_or_document(client, body, message):
    response = client.post("/v1/jobs", json=body)
    assert response.status_code == 422 and message in response.json["error"]["message"]


def test_the_document_of_a_job_not_yet_done_or_without_one(client):
    queued = upload(client, "a.md", samples.MARKDOWN.encode()).json
    response = client.get(f"/v1/jobs/{queued['id']}/document")
    assert response.status_code == 409 and response.json["error"]["code"] == "conflict"
    plain = client.post("/v1/jobs", json={"text": "普通的句子。"}).json
    response = client.get(f"/v1/jobs/{plain['id']}/document")
    assert response.status_code == 404 and response.json["error"]["code"] == "not_found"
    assert client.get("/v1/jobs/" + "0" * 32 + "/document").status_code == 404


def test_malformed_multipart_bodies_are_400(client):
    part = b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n' + "你好。".encode()
    for content_type, body in [
        ("multipart/form-data", part + b"\r\n--xyz--\r\n"),
        ("multipart/form-data; boundary=xyz", part),
    ]:
        response = client.post("/v1/documents", data=body, headers={"Content-Type": content_type})
        assert response.status_code == 400 and response.json["error"]["code"] == "bad_request", response.json


def test_html_responses_carry_nosniff_csp_and_frame_protection(client):
    for path in ("/", "/docs"):
        response = client.get(path)
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert response.headers["X-Content-Type-Options"] == "nosniff" and response.headers["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]


def test_a_client_over_its_storage_limit_is_refused_and_another_is_not(make_app):
    """Each upload's compressed source counts against its client (here its address) until it expires; the
    first upload of a client holding nothing always goes in."""
    client = make_app(client_storage_bytes=300_000).test_client()
    document = f"<p>一句话。</p><img src='data:image/png;base64,{os.urandom(120_000).hex()}'>"
    statuses = [upload(client, f"{i}.html", document.encode()).status_code for i in range(3)]
    assert statuses == [202, 202, 429]
    refused = upload(client, "3.html", document.encode())
    error = refused.json["error"]
    assert refused.status_code == 429 and error["code"] == "storage_quota_exceeded"
    assert "TRANSQ_CLIENT_STORAGE_BYTES" in error["message"] and "TRANSQ_DOCUMENT_TTL" in error["message"]
    assert 0 < int(refused.headers["Retry-After"]) <= 3600
    other = client.post(
        "/v1/documents",
        data={"file": (io.BytesIO(document.encode()), "x.html")},
        content_type="multipart/form-data",
        environ_base={"REMOTE_ADDR": "10.1.2.3"},
    )
    assert other.status_code == 202, other.json

"""Translators' files (PO, XLIFF), Office files and EPUB books at the HTTP boundary: recognised by extension or media type, stored as the
bytes they are (their own encoding declared inside), charged nothing until the document stage has parsed
them; `retranslate` is a boolean for these formats only. Their translation through the whole stack is
tests/reliability/test_translator_files.py."""

import io

import pytest

from api.documents.download_names import download_name
from tests.api.documents import samples
from tests.api.documents.epub_sample import epub_bytes


def upload(client, name, data, **fields):  # type: ignore[no-untyped-def]
    form = {"file": (io.BytesIO(data), name), **fields}
    return client.post("/v1/documents", data=form, content_type="multipart/form-data")


@pytest.mark.parametrize(
    "name, data, fmt",
    [
        ("messages.po", samples.PO, "po"),
        ("template.POT", samples.PO, "po"),
        ("app.xlf", samples.XLIFF12, "xliff"),
        ("guide.xliff", samples.XLIFF20, "xliff"),
        ("latin1.po", 'msgid "Caf\u00e9"\nmsgstr ""\n'.encode("latin-1"), "po"),  # not UTF-8: the stage reads it
        ("figures.XLSX", samples.xlsx_bytes(), "xlsx"),
        ("slides.pptx", samples.pptx_bytes(), "pptx"),
        ("letter.odt", samples.odt_bytes(), "odt"),
        ("book.EPUB", epub_bytes(), "epub"),
    ],
)
def test_translator_files_become_jobs(client, name, data, fmt):
    response = upload(client, name, data, **({"retranslate": "true"} if fmt in ("po", "xliff") else {}))
    assert response.status_code == 202, response.json
    assert response.json["format"] == fmt and response.json["status"] == "parsing"


@pytest.mark.parametrize(
    "media_type, data, fmt",
    [
        ("text/x-gettext-translation", samples.PO, "po"),
        ("application/x-gettext", samples.PO, "po"),
        ("application/xliff+xml", samples.XLIFF12, "xliff"),
        ("application/x-xliff+xml", samples.XLIFF20, "xliff"),
        ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", samples.xlsx_bytes(), "xlsx"),
        ("application/epub+zip", epub_bytes(), "epub"),
    ],
)
def test_a_bare_translator_file_takes_its_format_from_the_content_type(client, media_type, data, fmt):
    response = client.post("/v1/documents?filename=x", data=data, content_type=media_type)
    assert response.status_code == 202, response.json
    assert response.json["format"] == fmt


@pytest.mark.parametrize(
    "name, data, fields, message",
    [
        ("a.po", samples.PO, {"retranslate": "perhaps"}, "retranslate must be true or false"),
        ("a.po", samples.PO, {"retranslate": "x" * 100_000}, "retranslate must be true or false"),
        ("a.md", samples.MARKDOWN.encode(), {"retranslate": "true"}, "retranslate applies to po and xliff"),
        ("a.docx", samples.docx_bytes(), {"retranslate": "1"}, "retranslate applies to po and xliff"),
        ("a.xlsx", samples.xlsx_bytes(), {"retranslate": "true"}, "retranslate applies to po and xliff"),
        ("a.epub", epub_bytes(), {"retranslate": "true"}, "retranslate applies to po and xliff"),
    ],
)
def test_retranslate_is_a_boolean_for_translator_files_only(client, name, data, fields, message):
    response = upload(client, name, data, **fields)
    assert response.status_code == 422, response.json
    assert response.json["error"]["code"] == "validation_error" and message in response.json["error"]["message"]


def test_a_translator_file_is_not_a_json_jobs_format(client):
    response = client.post("/v1/jobs", json={"text": samples.PO.decode(), "format": "po"})
    assert response.status_code == 422 and ".po" in response.json["error"]["message"]


def test_a_translated_template_downloads_as_a_catalog():
    assert download_name("messages.pot", "job1", ".po", "zh-en-opus") == "messages.en.po"
    assert download_name("app.xliff", "job1", ".xlf", "zh-en-opus") == "app.en.xliff"
    assert download_name(None, "job1", ".xlf", "zh-en-opus") == "job1.en.xlf"
    assert download_name("小说.epub", "job1", ".epub", "zh-en-opus") == "小说.en.epub"


@pytest.mark.parametrize("name", ["renamed.xlsx", "renamed.pptx", "renamed.odt", "renamed.epub"])
def test_an_office_file_that_is_not_a_zip_is_refused_at_once(client, name):
    response = upload(client, name, samples.MARKDOWN.encode())
    assert response.status_code == 422 and response.json["error"]["code"] == "invalid_document"
    assert "file is a zip archive" in response.json["error"]["message"]

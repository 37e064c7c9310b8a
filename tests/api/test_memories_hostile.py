"""Hostile clients of translation memories (POST/GET /v1/memories), on the real app and a real Redis, no worker:
what a file or form may hold that the import once answered with a 500 or stored so that its export broke."""

import io
import xml.etree.ElementTree as ET

import pytest
from werkzeug.datastructures import MultiDict

GOOD, OTHER = "good-key-1", "other-key-2"
ALICE = {"X-API-Key": GOOD}


@pytest.fixture
def client(make_app):
    return make_app(
        api_keys=f"{GOOD},{OTHER}", key_id_secret="s", auth_failure_limit="", languages="zh-en"
    ).test_client()


def upload(client, data, filename="m.tsv", fields=None):
    form = [("source_lang", "zh"), ("target_lang", "en"), *(fields or [])]
    form.append(("file", (io.BytesIO(data), filename)))
    return client.post("/v1/memories", data=MultiDict(form), headers=ALICE, content_type="multipart/form-data")


def refused(response, status):
    assert response.status_code == status, response.get_data(as_text=True)
    body = response.get_json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return body["error"]["message"]


def stored(client):
    return client.get("/v1/memories", headers=ALICE).get_json()["memories"]


def test_a_segment_nested_thousands_deep_is_read_not_a_500(client):
    """<hi> nested past Python's recursion limit (its text was gathered recursively: RecursionError, 500)."""
    depth = 5000
    seg = b"<hi>" * depth + "你好".encode() + b"<ph>{1}</ph>" + b"</hi>" * depth
    tmx = (
        b'<tmx version="1.4"><body><tu><tuv xml:lang="zh"><seg>' + seg + b"</seg></tuv>"
        b'<tuv xml:lang="en"><seg>Hello</seg></tuv></tu></body></tmx>'
    )
    created = upload(client, tmx, "deep.tmx")
    assert created.status_code == 201, created.get_data(as_text=True)
    exported = client.get(f"/v1/memories/{created.get_json()['id']}", headers=ALICE).get_data()
    assert [seg.text for seg in ET.fromstring(exported).iter("seg")] == ["你好", "Hello"]  # the <ph> code left out


@pytest.mark.parametrize("name", ["bad\x01name", "a\x1bb", "line\nbreak", "tab\tname", "\ufffe"])
def test_a_name_its_export_cannot_hold_is_refused(client, name):
    """A name with a control character was stored, and its TMX export was then not well-formed XML."""
    assert "control character" in refused(upload(client, "你好\tHello\n".encode(), fields=[("name", name)]), 422)
    assert stored(client) == []


@pytest.mark.parametrize("field", ["source_lang", "target_lang", "name", "format"])
def test_a_field_given_twice_is_refused_not_guessed(client, field):
    """A repeated form field (say source_lang=zh and source_lang=en) was read as its first value, silently."""
    value = {"source_lang": "en", "target_lang": "zh", "name": "other", "format": "csv"}[field]
    fields = [(field, value)] if field in ("source_lang", "target_lang") else [(field, value), (field, value)]
    assert field in refused(upload(client, "你好\tHello\n".encode(), fields=fields), 422)
    assert stored(client) == []


def test_two_files_are_refused(client):
    form = [("source_lang", "zh"), ("target_lang", "en")]
    form += [("file", (io.BytesIO("你好\tHello\n".encode()), "a.tsv")), ("file", (io.BytesIO(b"x\ty\n"), "b.tsv"))]
    response = client.post("/v1/memories", data=MultiDict(form), headers=ALICE, content_type="multipart/form-data")
    assert "file" in refused(response, 422)
    assert stored(client) == []

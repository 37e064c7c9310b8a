"""Translators' files through gunicorn, the document stage and a real worker with the copy model (its
translation of a sentence it was taught is that sentence): every untranslated unit comes back translated
(equal to its source), ids, notes, contexts, placeholders and inline elements kept, translated units left
alone unless `retranslate=true`; the file parses again in translate-toolkit and passes `msgfmt --check`;
it downloads under its own name and media type. A hostile one fails its job `invalid_document`."""

import re
import shutil
import subprocess

import pytest
import requests

from tests.api.documents import samples
from tests.api.documents.shapes import po_shape, po_targets, xliff_shape, xliff_targets
from tests.worker.documents.test_translator_formats import BILLION_LAUGHS

pytestmark = pytest.mark.slow


def translated(stack, name: str, data: bytes, **fields: str) -> requests.Response:
    response = requests.post(stack.api.url + "/v1/documents", files={"file": (name, data)}, data=fields, timeout=60)
    assert response.status_code == 202, response.text
    job = stack.client.wait(response.json()["id"], timeout=300)
    assert job["status"] == "succeeded", job
    assert "translations" not in job["result"]  # a file: downloaded only
    download = requests.get(f"{stack.api.url}/v1/jobs/{job['id']}/document", timeout=30)
    assert download.status_code == 200
    return download


def test_a_po_file_comes_back_translated_and_checked_by_msgfmt(stack, tmp_path):
    download = translated(stack, "messages.pot", samples.PO)
    assert download.headers["Content-Type"] == "text/x-gettext-translation"
    assert re.search(r'filename="messages\.en\.po"', download.headers["Content-Disposition"])
    output = download.content
    assert po_shape(output) == po_shape(samples.PO)
    before, after = po_targets(samples.PO), po_targets(output)
    for message, targets in after.items():
        source = message.split("\x04")[-1]
        if any(before[message]):
            assert targets == before[message]  # translated, fuzzy, obsolete: as they were
        elif message.startswith("方案A"):
            assert targets == ["方案A：预加载模型（推荐）", "方案B：按需懒加载（节省冷启动内存）"]
        elif message:
            assert targets == [source], message  # the copy model: placeholders where they were
    if shutil.which("msgfmt"):
        (tmp_path / "out.po").write_bytes(output)
        done = subprocess.run(["msgfmt", "--check", "-o", "/dev/null", str(tmp_path / "out.po")], capture_output=True)
        assert done.returncode == 0, done.stderr.decode()


@pytest.mark.parametrize("sample", [samples.XLIFF12, samples.XLIFF20], ids=["1.2", "2.0"])
def test_an_xliff_file_comes_back_translated(stack, sample):
    download = translated(stack, "app.xlf", sample)
    assert download.headers["Content-Type"] == "application/xliff+xml"
    output = download.content
    assert xliff_shape(output) == xliff_shape(sample)
    kept = xliff_targets(sample)
    for unit, (attributes, inline, text) in xliff_targets(output).items():
        if unit in kept:
            assert (attributes, inline, text) == kept[unit]
        else:
            source = re.search(rf'id="{unit}"[^>]*>\s*<source>(.*?)</source>', sample.decode(), re.S).group(1)
            assert re.search(rf"<target[^>]*>{re.escape(source)}</target>", output.decode()), (unit, text)


def test_retranslate_translates_the_translated_units_too(stack):
    output = translated(stack, "app.xlf", samples.XLIFF20, retranslate="true").content
    assert xliff_targets(output)["s3"][2] == "企业官网建设流程全解析"


def test_a_hostile_xliff_fails_its_job_as_invalid(stack):
    response = requests.post(stack.api.url + "/v1/documents", files={"file": ("bomb.xlf", BILLION_LAUGHS)}, timeout=60)
    assert response.status_code == 202, response.text
    job = stack.client.wait(response.json()["id"], timeout=120)
    assert job["status"] == "failed" and job["error"]["code"] == "invalid_document", job
    assert "DOCTYPE" in job["error"]["message"]

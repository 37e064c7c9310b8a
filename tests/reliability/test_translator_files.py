"""Translators' files through gunicorn, the document stage and a real worker with the copy model: every
untranslated unit comes back translated (from its source's own words: the stack's copy model still cuts
some sentences short, so the text is checked to be made of the source's characters, not equal), ids, notes, contexts, placeholders and inline elements kept, translated units left
alone unless `retranslate=true`; the file parses again in translate-toolkit and passes `msgfmt --check`;
it downloads under its own name and media type. A hostile one fails its job `invalid_document`."""

import re
import shutil
import subprocess

import pytest
import requests

from tests.api.documents import samples
from tests.api.documents.shapes import po_shape, po_targets, xliff_inline, xliff_shape, xliff_targets
from tests.worker.documents.test_translator_formats import BILLION_LAUGHS
from worker.documents.formats.po_format import PLACEHOLDER

pytestmark = pytest.mark.slow


def copied_from(text: str, source: str) -> bool:
    """Non-empty and made of the source's characters (what the copy model can give back; sentences that
    touched are joined with a space, as for any target language: shared.text.splitter.needs_space)."""
    return bool(text.strip()) and set(text) <= set(source) | {" "}


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
            assert (
                len(targets) == 2
                and copied_from(targets[0], source)
                and copied_from(targets[1], "方案B：按需懒加载（节省冷启动内存）")
            )
        elif message:
            assert len(targets) == 1 and copied_from(targets[0], source), (message, targets)
            assert PLACEHOLDER.findall(targets[0]) == PLACEHOLDER.findall(source)  # where they were, in order
            assert targets[0].endswith("\n") == source.endswith("\n")
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
    kept, inline = xliff_targets(sample), xliff_inline(sample)
    targets = xliff_targets(output)
    assert set(targets) == set(kept) | {"button", "snapshot", "s1", "s2"} & set(inline)  # translate="no" left alone
    for unit, (attributes, elements, text) in targets.items():
        if unit in kept:
            assert (attributes, elements, text) == kept[unit]
        else:
            assert elements == inline[unit] and copied_from(text, sample.decode()), (unit, text)


def test_retranslate_translates_the_translated_units_too(stack):
    output = translated(stack, "app.xlf", samples.XLIFF20, retranslate="true").content
    text = xliff_targets(output)["s3"][2]
    assert text != "Done by a translator" and copied_from(text, "企业官网建设流程全解析")


def test_a_hostile_xliff_fails_its_job_as_invalid(stack):
    response = requests.post(stack.api.url + "/v1/documents", files={"file": ("bomb.xlf", BILLION_LAUGHS)}, timeout=60)
    assert response.status_code == 202, response.text
    job = stack.client.wait(response.json()["id"], timeout=120)
    assert job["status"] == "failed" and job["error"]["code"] == "invalid_document", job
    assert "DOCTYPE" in job["error"]["message"]


def test_a_workbook_comes_back_with_its_string_cells_translated_only(stack):
    import io

    import openpyxl

    source = samples.xlsx_bytes()
    download = translated(stack, "figures.xlsx", source)
    assert download.headers["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert re.search(r'filename="figures\.en\.xlsx"', download.headers["Content-Disposition"])
    before, after = (openpyxl.load_workbook(io.BytesIO(data)) for data in (source, download.content))
    assert before.sheetnames == after.sheetnames
    for sheet in before:
        for row in sheet.iter_rows():
            for cell in row:
                got = after[sheet.title][cell.coordinate].value
                if isinstance(cell.value, str) and not cell.value.startswith("="):
                    assert copied_from(str(got), cell.value), (cell.coordinate, got)
                else:
                    assert got == cell.value, cell.coordinate  # numbers, dates, formulas


def test_a_presentation_comes_back_with_its_runs(stack):
    from tests.worker.documents.test_pptx_format import shape_of, texts_of

    source = samples.pptx_bytes()
    download = translated(stack, "slides.pptx", source)
    assert download.headers["Content-Type"].endswith("presentationml.presentation")
    assert shape_of(download.content) == shape_of(source)
    for before, after in zip(texts_of(source), texts_of(download.content)):
        assert before == after == "" or copied_from(after, before), (before, after)


def test_an_odt_comes_back_with_its_elements(stack):
    from tests.worker.documents.test_odt_format import shape_of

    source = samples.odt_bytes()
    download = translated(stack, "letter.odt", source)
    assert download.headers["Content-Type"] == "application/vnd.oasis.opendocument.text"
    assert shape_of(download.content) == shape_of(source)


def test_an_epub_comes_back_with_every_entry_but_its_text(stack):
    from tests.api.documents.epub_sample import TRANSLATED, epub_bytes
    from tests.worker.documents.test_epub_format import entries, shape_of, texts_of

    source = epub_bytes()
    download = translated(stack, "内存 book.epub", source)
    assert download.headers["Content-Type"] == "application/epub+zip"
    assert "filename*=UTF-8''%E5%86%85%E5%AD%98%20book.en.epub" in download.headers["Content-Disposition"]
    output = download.content
    assert shape_of(output) == shape_of(source)
    before, after = entries(source), entries(output)
    assert list(after) == list(before) and all(after[n] == before[n] for n in before if n not in TRANSLATED)
    (blocks, kept), (new_blocks, new_kept) = texts_of(source), texts_of(output)
    assert new_kept == kept and new_blocks.keys() == blocks.keys()
    for key, text in blocks.items():
        assert copied_from(new_blocks[key], text + "\xa0"), (key, new_blocks[key])


DRM = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"


@pytest.mark.parametrize(
    "replaced, message",
    [
        ({"META-INF/encryption.xml": DRM}, "encrypted (DRM"),
        ({"OEBPS/text/chapter 2.xhtml": "<html><p>没有结束</html>"}, "not well-formed"),
        ({"../evil": "x"}, "leads out of the book"),
    ],
    ids=["drm", "malformed", "traversal"],
)
def test_a_hostile_epub_fails_its_job_and_leaves_nothing(stack, replaced, message):
    from tests.api.documents.epub_sample import epub_bytes
    from tests.worker.documents.test_epub_format import encryption_xml

    if replaced.get("META-INF/encryption.xml") == DRM:
        replaced = {"META-INF/encryption.xml": encryption_xml(DRM)}
    response = requests.post(
        stack.api.url + "/v1/documents", files={"file": ("book.epub", epub_bytes(replaced))}, timeout=60
    )
    assert response.status_code == 202, response.text
    job = stack.client.wait(response.json()["id"], timeout=120)
    assert job["status"] == "failed" and job["error"]["code"] == "invalid_document", job
    assert message in job["error"]["message"]
    prefix = stack.settings.key_prefix
    assert stack.r.exists(f"{prefix}docout:{job['id']}", f"{prefix}docsrc:{job['id']}") == 0
    download = requests.get(f"{stack.api.url}/v1/jobs/{job['id']}/document", timeout=30)
    assert download.status_code == 409

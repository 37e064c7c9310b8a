"""OpenDocument text through prepare/render: headings, paragraphs, notes and cells translated, spans and
links around their own words, line breaks and notes kept; every other part byte for byte; odfpy reads the
output; hostile archives refused."""

import io
import zipfile

import pytest
from lxml import etree
from odf.opendocument import load

from shared.document_formats import DocumentError, DocumentTooComplex
from tests.api.documents import samples
from tests.worker.documents.test_xlsx_format import rezipped
from worker.documents.formats import DocumentLimits, prepare

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"


def shape_of(data: bytes) -> list:
    """Every element of content.xml with its attributes, without the text."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        root = etree.fromstring(archive.read("content.xml"))
    return [(element.tag, dict(element.attrib)) for element in root.iter("*")]


def test_odt_translates_its_paragraphs_keeping_spans_links_breaks_and_notes():
    source = samples.odt_bytes()
    prepared = prepare("odt", source, 300)
    assert "日志记录内存快照，便于问题排查" in prepared.units and "使用fp16或int8量化降低静态内存占用" in prepared.units
    output = prepared.render([f"<{unit}>" for unit in prepared.units])
    assert shape_of(output) == shape_of(source)
    load(io.BytesIO(output))  # odfpy reads it
    with zipfile.ZipFile(io.BytesIO(output)) as archive:
        content = archive.read("content.xml").decode()
        assert archive.namelist()[0] == "mimetype" and archive.infolist()[0].compress_type == zipfile.ZIP_STORED
    assert "<日志记录内存快照，便于问题排查>" in content.replace("&lt;", "<").replace("&gt;", ">")
    with zipfile.ZipFile(io.BytesIO(source)) as a, zipfile.ZipFile(io.BytesIO(output)) as b:
        for name in a.namelist():
            assert name in ("content.xml", "styles.xml") or a.read(name) == b.read(name), name


def test_odt_with_the_copy_models_translation_keeps_every_text():
    source = samples.odt_bytes()
    prepared = prepare("odt", source, 300)
    output = prepared.render(list(prepared.units))
    assert shape_of(output) == shape_of(source)
    with zipfile.ZipFile(io.BytesIO(source)) as a, zipfile.ZipFile(io.BytesIO(output)) as b:
        before = "".join(etree.fromstring(a.read("content.xml")).itertext())
        after = "".join(etree.fromstring(b.read("content.xml")).itertext())
    assert after.replace("。 ", "。").replace("） ", "）") == before


def odt_bomb(paragraphs: int = 3_000_000) -> bytes:
    xml = f'<office:document-content xmlns:office="o" xmlns:text="{TEXT[1:-1]}">' + "<text:p>字</text:p>" * paragraphs
    return rezipped(samples.odt_bytes(), {"content.xml": (xml + "</office:document-content>").encode()})


@pytest.mark.parametrize(
    "data, error, message",
    [
        (lambda: odt_bomb(), DocumentTooComplex, "unpacks to"),
        (lambda: odt_bomb(60_000), DocumentTooComplex, "TRANSQ_MAX_DOCUMENT_PARTS"),
        (lambda: rezipped(samples.odt_bytes(), {"content.xml": None}), DocumentError, "no content.xml"),
        (lambda: rezipped(samples.odt_bytes(), {"content.xml": b"<office:x"}), DocumentError, "well-formed"),
        (
            lambda: rezipped(samples.odt_bytes(), {"content.xml": b'<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'}),
            DocumentError,
            "DOCTYPE",
        ),
    ],
    ids=["bomb", "parts", "no-content", "malformed", "entities"],
)
def test_hostile_or_malformed_odt_files_are_refused(data, error, message):
    with pytest.raises(error, match=message):
        prepare("odt", data(), 300, DocumentLimits(max_parts=50_000))

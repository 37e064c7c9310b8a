"""Excel workbooks through prepare/render: string cells translated (a rich one's fonts kept), everything
else (numbers, dates, formulas, sheet names, every other part of the zip) as it was; a zip bomb, a zip that
is no workbook and an entity declaration are refused."""

import io
import zipfile

import openpyxl
import pytest

from shared.document_formats import DocumentError, DocumentTooComplex
from tests.api.documents import samples
from worker.documents.formats import DocumentLimits, prepare


def cells(data: bytes) -> dict[tuple[str, str], object]:
    book = openpyxl.load_workbook(io.BytesIO(data), rich_text=True)
    return {(sheet.title, cell.coordinate): cell.value for sheet in book for row in sheet.iter_rows() for cell in row}


def test_xlsx_translates_string_cells_only():
    source = samples.xlsx_bytes()
    prepared = prepare("xlsx", source, 300)
    assert prepared.units == [  # openpyxl writes each cell's string inline, in its sheet
        "企业官网建设流程全解析",
        "防止容器耗尽主机资源。",
        "首次请求触发加载，后续复用，适合内存紧张环境。",
        "企业官网建设流程全解析",
        "日志记录内存快照，便于问题排查",
    ]
    translations = ["An overview", "Keep the host's resources.", "Loaded once.", "An overview", "Log snapshots"]
    output = prepared.render(translations)
    before, after = cells(source), cells(output)
    assert after.keys() == before.keys()
    changed = {key for key in before if after[key] != before[key]}
    assert changed == {("数据", "A1"), ("数据", "B1"), ("数据", "B2"), ("说明", "A1")}
    assert after[("数据", "A1")] == after[("数据", "B2")] == "An overview"
    rich = after[("数据", "B1")]
    assert str(rich) == "Keep the host's resources. Loaded once."
    assert [getattr(getattr(block, "font", None), "b", None) for block in rich] == [None, True]  # bold kept
    assert after[("数据", "A3")] == "=A2*2" and after[("数据", "A2")] == 42  # formulas, numbers untouched
    with zipfile.ZipFile(io.BytesIO(source)) as a, zipfile.ZipFile(io.BytesIO(output)) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():  # every part but the sheets' strings, byte for byte
            assert name.startswith("xl/worksheets/") or a.read(name) == b.read(name), name


def test_xlsx_with_the_copy_models_translation_is_unchanged():
    source = samples.xlsx_bytes()
    prepared = prepare("xlsx", source, 300)
    before, after = cells(source), cells(prepared.render(list(prepared.units)))
    rich = ("数据", "B1")  # two sentences that touched: joined with a space (shared.text.splitter.needs_space)
    assert {k: v for k, v in after.items() if k != rich} == {k: v for k, v in before.items() if k != rich}
    assert str(after[rich]) == str(before[rich]).replace("。", "。 ", 1)


def rezipped(data: bytes, replaced: dict[str, bytes | None]) -> bytes:
    """The zip with the parts of `replaced` replaced, added, or (None) left out."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            if name not in replaced:
                target.writestr(name, source.read(name))
        for name, part in replaced.items():
            if part is not None:
                target.writestr(name, part)
    return out.getvalue()


def xlsx_bomb(strings: int = 4_000_000) -> bytes:
    """A sharedStrings.xml of ~100 MB that deflates to a few hundred KiB."""
    item = "<si><t>字</t></si>"
    xml = f'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">{item * strings}</sst>'
    return rezipped(samples.xlsx_bytes(), {"xl/sharedStrings.xml": xml.encode()})


ENTITIES = b"""<?xml version="1.0"?><!DOCTYPE sst [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>&b;</t></si></sst>"""


@pytest.mark.parametrize(
    "data, error, message",
    [
        (lambda: xlsx_bomb(), DocumentTooComplex, "unpacks to"),
        (lambda: rezipped(samples.xlsx_bytes(), {"xl/workbook.xml": None}), DocumentError, "no xl/workbook.xml"),
        (lambda: b"PK\x03\x04 not really a zip", DocumentError, "not a readable zip"),
        (lambda: rezipped(samples.xlsx_bytes(), {"xl/sharedStrings.xml": ENTITIES}), DocumentError, "DOCTYPE"),
        (lambda: rezipped(samples.xlsx_bytes(), {"xl/sharedStrings.xml": b"<sst><si>"}), DocumentError, "well-formed"),
    ],
    ids=["bomb", "no-workbook", "not-a-zip", "entities", "malformed"],
)
def test_hostile_or_malformed_workbooks_are_refused(data, error, message):
    with pytest.raises(error, match=message):
        prepare("xlsx", data(), 300)


def test_xlsx_over_the_parts_limit_is_too_complex():
    with pytest.raises(DocumentTooComplex):
        prepare("xlsx", samples.xlsx_bytes(), 300, DocumentLimits(max_parts=5))


def test_xlsx_shared_strings_are_translated_in_place():
    shared = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1">'
        + "<si><t>企业官网建设流程全解析</t></si><si><t>—</t></si></sst>".encode()
    )
    source = rezipped(samples.xlsx_bytes(), {"xl/sharedStrings.xml": shared})
    prepared = prepare("xlsx", source, 300)
    assert prepared.units.count("企业官网建设流程全解析") == 3  # two inline, one shared; "—" is no text
    output = prepared.render(["Overview"] * len(prepared.units))
    with zipfile.ZipFile(io.BytesIO(output)) as archive:
        assert "<si><t>Overview</t></si><si><t>—</t></si>" in archive.read("xl/sharedStrings.xml").decode()

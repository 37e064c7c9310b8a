"""PowerPoint presentations through prepare/render: every text frame, table cell and note translated, each
run's formatting and every line break kept; a zip bomb, a zip that is no presentation, a broken one
refused."""

import io
import zipfile

import pytest
from pptx import Presentation

from shared.document_formats import DocumentError, DocumentTooComplex
from tests.api.documents import samples
from tests.worker.documents.test_xlsx_format import rezipped
from worker.documents.formats import DocumentLimits, prepare


def shape_of(data: bytes) -> list:
    """Each paragraph where it is: its runs' formatting and line breaks, apart from their text."""
    out = []
    deck = Presentation(io.BytesIO(data))
    for number, slide in enumerate(deck.slides):
        frames = [(shape.shape_type, shape.text_frame) for shape in slide.shapes if shape.has_text_frame]
        frames += [
            ("cell", cell.text_frame)
            for shape in slide.shapes
            if shape.has_table
            for row in shape.table.rows
            for cell in row.cells
        ]
        if slide.has_notes_slide:
            frames.append(("notes", slide.notes_slide.notes_text_frame))
        for kind, frame in frames:
            for paragraph in frame.paragraphs:
                runs = [(run.font.bold, run.font.italic) for run in paragraph.runs]
                out.append((number, str(kind), runs, paragraph._p.xml.count("<a:br")))
    return out


def texts_of(data: bytes) -> list[str]:
    deck = Presentation(io.BytesIO(data))
    out = []
    for slide in deck.slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                out.append(shape.text_frame.text)
            if shape.has_table:
                out += [cell.text for row in shape.table.rows for cell in row.cells]
        out.append(slide.notes_slide.notes_text_frame.text if slide.has_notes_slide else "")
    return out


def test_pptx_translates_frames_cells_and_notes_keeping_runs():
    source = samples.pptx_bytes()
    prepared = prepare("pptx", source, 300)
    assert set(prepared.units) >= {
        "企业官网建设流程全解析",
        "日志记录内存快照，便于问题排查",
        "完成内存优化后，可进一步探索以下方向：",
        "首次请求触发加载，后续复用，适合内存紧张环境。",
        "方案B：按需懒加载（节省冷启动内存）",
        "42",
    }
    output = prepared.render([f"<{unit}>" for unit in prepared.units])
    assert shape_of(output) == shape_of(source)
    for before, after in zip(texts_of(source), texts_of(output)):
        assert (before == after == "") or (before != after and "<" in after), (before, after)
    with zipfile.ZipFile(io.BytesIO(source)) as a, zipfile.ZipFile(io.BytesIO(output)) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())


def test_pptx_with_the_copy_models_translation_is_unchanged_but_for_the_joining_space():
    source = samples.pptx_bytes()
    prepared = prepare("pptx", source, 300)
    output = prepared.render(list(prepared.units))
    assert shape_of(output) == shape_of(source)
    assert [t.replace("。 ", "。") for t in texts_of(output)] == texts_of(source)


def pptx_bomb(paragraphs: int = 2_000_000) -> bytes:
    a = "http://schemas.openxmlformats.org/drawingml/2006/main"
    xml = f'<p:sld xmlns:a="{a}" xmlns:p="x">' + "<a:p><a:r><a:t>字</a:t></a:r></a:p>" * paragraphs + "</p:sld>"
    return rezipped(samples.pptx_bytes(), {"ppt/slides/slide1.xml": xml.encode()})


@pytest.mark.parametrize(
    "data, error, message",
    [
        (lambda: pptx_bomb(), DocumentTooComplex, "unpacks to"),
        (lambda: pptx_bomb(30_000), DocumentTooComplex, "TRANSQ_MAX_DOCUMENT_PARTS"),
        (lambda: rezipped(samples.pptx_bytes(), {"ppt/presentation.xml": None}), DocumentError, "no ppt/presentation"),
        (lambda: rezipped(samples.pptx_bytes(), {"ppt/slides/slide1.xml": b"<p:sld"}), DocumentError, "well-formed"),
        (lambda: b"PK\x03\x04 not really a zip", DocumentError, "not a readable zip"),
    ],
    ids=["bomb", "parts", "no-presentation", "malformed", "not-a-zip"],
)
def test_hostile_or_malformed_presentations_are_refused(data, error, message):
    with pytest.raises(error, match=message):
        prepare("pptx", data(), 300, DocumentLimits(max_parts=50_000))

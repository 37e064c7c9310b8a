"""Word documents: python-docx reads and writes the file. Each paragraph (in the body, in tables, in
headers and footers) is a run of text whose Word runs (stretches of one formatting) are its spans; the
translation is cut back into the same Word runs, so bold stays bold and every run, style, table,
image and field stays where it was. Adjacent runs of identical formatting are merged first (Word
splits them at every edit)."""

from __future__ import annotations

import io
import zipfile
from typing import Iterator

from docx import Document as open_docx
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from docx.text.run import Run
from lxml import etree

from api.documents.errors import DocumentError
from api.documents.runs import TextRun, TranslatedRun

# Runs holding only these are text; a run with anything else (a picture, a field) is left alone.
_TEXT_CHILDREN = {qn(tag) for tag in ("w:rPr", "w:t", "w:tab", "w:br", "w:cr", "w:noBreakHyphen", "w:softHyphen")}
_MAX_UNPACKED = 100 * 2**20


class DocxDocument:
    def __init__(self, data: bytes):
        _check_archive(data)
        try:
            self.document = open_docx(io.BytesIO(data))
        except (PackageNotFoundError, KeyError, ValueError, etree.XMLSyntaxError, zipfile.BadZipFile) as exc:
            raise DocumentError(f"not a valid .docx file: {exc}") from None
        self.paragraph_runs: list[list[Run]] = []
        self.runs: list[TextRun] = []
        for paragraph in _paragraphs(self.document):
            words = _text_runs(paragraph)
            run = TextRun("")
            for word_run in words:
                opened = run.open()
                run.text += word_run.text
                run.close(opened)
            if run.translatable:
                self.paragraph_runs.append(words)
                self.runs.append(run)

    def render(self, translated: list[TranslatedRun]) -> bytes:
        for words, translation in zip(self.paragraph_runs, translated):
            offsets = translation.offsets
            for number, word_run in enumerate(words):
                start = offsets[2 * number]
                end = offsets[2 * number + 2] if 2 * number + 2 < len(offsets) else len(translation.text)
                word_run.text = translation.text[start:end]
        out = io.BytesIO()
        self.document.save(out)
        return out.getvalue()


def _check_archive(data: bytes) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile:
        raise DocumentError("not a valid .docx file: it is not a zip archive") from None
    if unpacked > _MAX_UNPACKED:
        raise DocumentError(f"the .docx file unpacks to {unpacked} bytes; at most {_MAX_UNPACKED} are read")


def _paragraphs(document) -> Iterator[Paragraph]:  # type: ignore[no-untyped-def]
    yield from _container_paragraphs(document)
    for section in document.sections:
        for part in (section.header, section.footer):
            if not part.is_linked_to_previous:
                yield from _container_paragraphs(part)


def _container_paragraphs(container) -> Iterator[Paragraph]:  # type: ignore[no-untyped-def]
    for block in container.iter_inner_content():
        if isinstance(block, Paragraph):
            yield block
        elif isinstance(block, Table):
            for row in block.rows:
                seen = set()
                for cell in row.cells:
                    if id(cell._tc) in seen:  # a merged cell appears once per grid column it spans
                        continue
                    seen.add(id(cell._tc))
                    yield from _container_paragraphs(cell)


def _text_runs(paragraph: Paragraph) -> list[Run]:
    """The paragraph's text-only runs (hyperlinks' runs included), same-format neighbours merged."""
    runs: list[Run] = []
    for item in paragraph.iter_inner_content():
        for run in item.runs if not isinstance(item, Run) else [item]:
            if not all(child.tag in _TEXT_CHILDREN for child in run._r):
                runs.append(None)  # type: ignore[arg-type]  # a boundary: not merged across
                continue
            previous = runs[-1] if runs else None
            if previous is not None and previous._r.getparent() is run._r.getparent() and _same_format(previous, run):
                previous.text = previous.text + run.text
                run._r.getparent().remove(run._r)
            else:
                runs.append(run)
    return [run for run in runs if run is not None]


def _same_format(first: Run, second: Run) -> bool:
    def properties(run: Run) -> bytes:
        rpr = run._r.find(qn("w:rPr"))
        return etree.tostring(rpr) if rpr is not None else b""

    return properties(first) == properties(second)

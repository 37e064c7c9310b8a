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

from shared.document_formats import DocumentError
from worker.documents.formats.docx_archive import check_archive
from worker.documents.formats.limits import DocumentLimits
from worker.documents.formats.placement import TranslatedRun
from worker.documents.formats.runs import TextRun

# Runs holding only these are text; a run with anything else (a picture, a field) is left alone.
_TEXT_CHILDREN = {qn(tag) for tag in ("w:rPr", "w:t", "w:tab", "w:br", "w:cr", "w:noBreakHyphen", "w:softHyphen")}


class DocxDocument:
    def __init__(self, data: bytes, limits: DocumentLimits | None = None):
        check_archive(data, limits or DocumentLimits())
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
                run.add(word_run.text)
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
    """The paragraph's text-only runs (hyperlinks' runs included), same-format neighbours merged (each
    merged run's text is set once, so a paragraph of many small runs costs time in proportion to it)."""
    groups: list[list[Run]] = []
    current: list[Run] | None = None
    current_format = b""
    for item in paragraph.iter_inner_content():
        for run in item.runs if not isinstance(item, Run) else [item]:
            if not all(child.tag in _TEXT_CHILDREN for child in run._r):
                current = None  # a boundary: not merged across
                continue
            run_format = _format(run)
            if current and current[-1]._r.getparent() is run._r.getparent() and run_format == current_format:
                current.append(run)
            else:
                current, current_format = [run], run_format
                groups.append(current)
    for group in groups:
        if len(group) > 1:
            group[0].text = "".join(run.text for run in group)
            for run in group[1:]:
                run._r.getparent().remove(run._r)
    return [group[0] for group in groups]


def _format(run: Run) -> bytes:
    rpr = run._r.find(qn("w:rPr"))
    return etree.tostring(rpr) if rpr is not None else b""

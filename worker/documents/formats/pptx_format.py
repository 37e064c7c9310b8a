"""PowerPoint presentations (.pptx): python-pptx reads and writes the file. Each paragraph of every text
frame (in shapes, placeholders, groups), of every table cell and of each slide's notes is a run of text
whose runs (stretches of one formatting) are its spans, cut back into the same runs as a Word paragraph is,
so every run keeps its font, and line breaks, fields (slide numbers, dates), pictures, charts, layouts and
animations stay where they were."""

from __future__ import annotations

import io
import zipfile
from typing import Iterator

from lxml import etree
from pptx import Presentation
from pptx.exc import PackageNotFoundError
from pptx.shapes.group import GroupShape
from pptx.text.text import _Paragraph, _Run

from shared.document_formats import DocumentError
from worker.documents.formats.docx_archive import PPTX, check_archive
from worker.documents.formats.limits import DocumentLimits
from worker.documents.formats.placement import TranslatedRun
from worker.documents.formats.runs import TextRun


class PptxDocument:
    def __init__(self, data: bytes, limits: DocumentLimits | None = None):
        check_archive(data, limits or DocumentLimits(), PPTX)
        try:
            self.presentation = Presentation(io.BytesIO(data))
        except (PackageNotFoundError, KeyError, ValueError, etree.XMLSyntaxError, zipfile.BadZipFile) as exc:
            raise DocumentError(f"not a valid .pptx file: {exc}") from None
        self.paragraph_runs: list[list[_Run]] = []
        self.runs: list[TextRun] = []
        for paragraph in _paragraphs(self.presentation):
            pieces = [run for run in paragraph.runs]
            run = TextRun("")
            for piece in pieces:
                opened = run.open()
                run.add(piece.text)
                run.close(opened)
            if run.translatable:
                self.paragraph_runs.append(pieces)
                self.runs.append(run)

    def render(self, translated: list[TranslatedRun]) -> bytes:
        for pieces, translation in zip(self.paragraph_runs, translated):
            if not translation.text.strip():
                continue  # a blank translation keeps the source's text
            offsets = translation.offsets
            for number, piece in enumerate(pieces):
                start = offsets[2 * number]
                end = offsets[2 * number + 2] if 2 * number + 2 < len(offsets) else len(translation.text)
                piece.text = translation.text[start:end].replace("\v", " ")  # \v would become a line break
        out = io.BytesIO()
        self.presentation.save(out)
        return out.getvalue()


def _paragraphs(presentation) -> Iterator[_Paragraph]:  # type: ignore[no-untyped-def]
    for slide in presentation.slides:
        yield from _shape_paragraphs(slide.shapes)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            yield from slide.notes_slide.notes_text_frame.paragraphs


def _shape_paragraphs(shapes) -> Iterator[_Paragraph]:  # type: ignore[no-untyped-def]
    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _shape_paragraphs(shape.shapes)
        elif shape.has_text_frame:
            yield from shape.text_frame.paragraphs
        elif getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                for cell in row.cells:
                    if not cell.is_spanned:  # a merged cell's text is in its origin cell
                        yield from cell.text_frame.paragraphs

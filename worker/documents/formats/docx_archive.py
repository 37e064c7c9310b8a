"""An Office file (.docx, .xlsx, .pptx, .odt) or an EPUB book checked before anything reads it: a zip that holds its main part, unpacking
to at most TRANSQ_DOCX_UNPACKED_BASE_MB + TRANSQ_DOCX_UNPACKED_RATIO x its size, whose text parts' elements
(paragraphs, runs and table cells; strings, their runs and cells), counted in one streaming pass (nothing
kept), are within TRANSQ_MAX_DOCUMENT_PARTS. python-docx builds the whole tree in memory (several times the
XML's size), so this is what bounds its time and memory."""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass

from lxml import etree

from shared.document_formats import DocumentError, DocumentTooComplex
from worker.documents.formats.limits import Budget, DocumentLimits

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


@dataclass(frozen=True)
class ArchiveKind:
    extension: str
    what: str
    main: str  # the part every file of the kind holds
    text_parts: re.Pattern[str]
    counted: tuple[str, ...]  # the elements of a text part that count as parts


DOCX = ArchiveKind(
    ".docx",
    "Word document",
    "word/document.xml",
    re.compile(r"word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml"),
    (f"{_W}p", f"{_W}r", f"{_W}tc"),
)
XLSX = ArchiveKind(
    ".xlsx",
    "spreadsheet",
    "xl/workbook.xml",
    re.compile(r"xl/(sharedStrings|worksheets/sheet\d+)\.xml"),
    (f"{_S}si", f"{_S}r", f"{_S}c"),
)
PPTX = ArchiveKind(
    ".pptx",
    "presentation",
    "ppt/presentation.xml",
    re.compile(r"ppt/(slides/slide\d+|notesSlides/notesSlide\d+)\.xml"),
    (f"{_A}p", f"{_A}r", f"{_A}tc"),
)
_T = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
ODT = ArchiveKind(
    ".odt",
    "OpenDocument text",
    "content.xml",
    re.compile(r"content\.xml|styles\.xml"),
    (f"{_T}p", f"{_T}h", f"{_T}span"),
)
# An EPUB's parts are named by its package document, not by a pattern: epub_package.py counts what it reads.
EPUB = ArchiveKind(".epub", "book (EPUB)", "META-INF/container.xml", re.compile("(?!)"), ())
MAIN = DOCX.main


def check_archive(data: bytes, limits: DocumentLimits, kind: ArchiveKind = DOCX) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            if kind.main not in names:
                raise DocumentError(f"not a {kind.what}: the zip archive has no {kind.main}")
            unpacked = sum(info.file_size for info in archive.infolist())
            cap = limits.docx_unpacked_limit(len(data))
            if unpacked > cap:
                raise DocumentTooComplex(
                    f"the {kind.extension} file unpacks to {unpacked} bytes; a file of {len(data)} bytes may unpack "
                    f"to at most {cap} (TRANSQ_DOCX_UNPACKED_BASE_MB + TRANSQ_DOCX_UNPACKED_RATIO x its size)"
                )
            budget = Budget(limits)
            for name in names:
                if kind.text_parts.fullmatch(name):
                    _count_parts(archive, name, budget, kind)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise DocumentError(f"not a valid {kind.extension} file: it is not a readable zip archive ({exc})") from None


def _count_parts(archive: zipfile.ZipFile, name: str, budget: Budget, kind: ArchiveKind) -> None:
    """Spend one part per counted element of `name`, streaming: each element is dropped once counted, so
    memory stays flat whatever the part's size."""
    with archive.open(name) as stream:
        try:
            for _, element in etree.iterparse(stream, events=("end",), tag=kind.counted, resolve_entities=False):
                budget.spend()
                element.clear()
                while element.getprevious() is not None:
                    del element.getparent()[0]
        except etree.XMLSyntaxError as exc:
            raise DocumentError(f"not a valid {kind.extension} file: {name} is not well-formed XML ({exc})") from None

"""A .docx file checked before python-docx reads it: a zip that holds a Word document, unpacking to at
most TRANSQ_DOCX_UNPACKED_BASE_MB + TRANSQ_DOCX_UNPACKED_RATIO x its size, whose paragraphs, runs and table
cells (counted in one streaming pass, nothing kept) are within TRANSQ_MAX_DOCUMENT_PARTS. python-docx builds
the whole tree in memory (several times the XML's size), so this is what bounds its time and memory."""

from __future__ import annotations

import io
import re
import zipfile
import zlib

from lxml import etree

from shared.document_formats import DocumentError, DocumentTooComplex
from worker.documents.formats.limits import Budget, DocumentLimits

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_COUNTED = (f"{_W}p", f"{_W}r", f"{_W}tc")
_TEXT_PARTS = re.compile(r"word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml")
MAIN = "word/document.xml"


def check_archive(data: bytes, limits: DocumentLimits) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            if MAIN not in names:
                raise DocumentError(f"not a Word document: the zip archive has no {MAIN}")
            unpacked = sum(info.file_size for info in archive.infolist())
            cap = limits.docx_unpacked_limit(len(data))
            if unpacked > cap:
                raise DocumentTooComplex(
                    f"the .docx file unpacks to {unpacked} bytes; a file of {len(data)} bytes may unpack to at most "
                    f"{cap} (TRANSQ_DOCX_UNPACKED_BASE_MB + TRANSQ_DOCX_UNPACKED_RATIO x its size)"
                )
            budget = Budget(limits)
            for name in names:
                if _TEXT_PARTS.fullmatch(name):
                    _count_parts(archive, name, budget)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise DocumentError(f"not a valid .docx file: it is not a readable zip archive ({exc})") from None


def _count_parts(archive: zipfile.ZipFile, name: str, budget: Budget) -> None:
    """Spend one part per paragraph, run and table cell of `name`, streaming: each element is dropped
    once counted, so memory stays flat whatever the part's size."""
    with archive.open(name) as stream:
        try:
            for _, element in etree.iterparse(stream, events=("end",), tag=_COUNTED, resolve_entities=False):
                budget.spend()
                element.clear()
                while element.getprevious() is not None:
                    del element.getparent()[0]
        except etree.XMLSyntaxError as exc:
            raise DocumentError(f"not a valid .docx file: {name} is not well-formed XML ({exc})") from None

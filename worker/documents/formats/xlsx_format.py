"""Excel workbooks (.xlsx): the text of string cells is translated, nothing else. A string cell holds an index
into the workbook's shared strings (xl/sharedStrings.xml) or its own inline string (`t="inlineStr"`, as
openpyxl writes them) in its sheet: only those parts are rewritten. Each string is a run of text, a rich
one's runs (stretches of one font) its spans, cut back into the same runs as a Word paragraph is. Every
other part of the zip is copied byte for byte, so numbers, dates, formulas (and their cached values),
styles, sheet names, charts, pictures and macros stay as they were (openpyxl, which would read the cells,
drops charts, pictures and shapes when it saves a workbook: the tests use it to read the output). Sheet
names are not translated (formulas refer to them)."""

from __future__ import annotations

import io
import re
import zipfile

from lxml import etree

from shared.document_formats import DocumentError
from worker.documents.formats.docx_archive import XLSX, check_archive
from worker.documents.formats.limits import DocumentLimits
from worker.documents.formats.placement import TranslatedRun
from worker.documents.formats.runs import TextRun
from worker.documents.formats.xml_text import NOT_XML

_S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
STRING_PARTS = re.compile(r"xl/(sharedStrings|worksheets/sheet\d+)\.xml")


class XlsxDocument:
    def __init__(self, data: bytes, limits: DocumentLimits | None = None):
        check_archive(data, limits or DocumentLimits(), XLSX)
        self.data = data
        self.parts: dict[str, etree._Element] = {}  # the parts holding strings to translate, parsed
        self.runs: list[TextRun] = []
        self.pieces: list[list[etree._Element]] = []  # each run's <t> elements, one per span
        parser = etree.XMLParser(resolve_entities=False, no_network=True)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for name in archive.namelist():
                if not STRING_PARTS.fullmatch(name):
                    continue
                try:
                    root = etree.fromstring(archive.read(name), parser)
                except etree.XMLSyntaxError as exc:
                    raise DocumentError(f"not a valid .xlsx file: {name} is not well-formed XML ({exc})") from None
                if root.getroottree().docinfo.internalDTD is not None:
                    raise DocumentError(f"not a valid .xlsx file: {name} has a DOCTYPE")
                if self._read_strings(root):
                    self.parts[name] = root

    def _read_strings(self, root: etree._Element) -> bool:
        """Add the part's translatable strings (shared `<si>`, inline `<is>`); whether it has any."""
        found = False
        for item in root.iter(f"{_S}si", f"{_S}is"):
            texts = item.findall(f"{_S}r/{_S}t") or item.findall(f"{_S}t")
            run = TextRun()
            for t in texts:
                opened = run.open()
                run.add(t.text or "")
                run.close(opened)
            if run.translatable:
                self.runs.append(run)
                self.pieces.append(texts)
                found = True
        return found

    def render(self, translated: list[TranslatedRun]) -> bytes:
        if not self.parts:
            return self.data
        for texts, translation in zip(self.pieces, translated):
            if not translation.text.strip():
                continue  # a blank translation keeps the source's text (a string cell never empties)
            offsets = translation.offsets
            for number, t in enumerate(texts):
                start = offsets[2 * number]
                end = offsets[2 * number + 2] if 2 * number + 2 < len(offsets) else len(translation.text)
                t.text = NOT_XML.sub(" ", translation.text[start:end])
                if t.text != t.text.strip():
                    t.set(_XML_SPACE, "preserve")
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(self.data)) as source, zipfile.ZipFile(out, "w") as target:
            for info in source.infolist():
                root = self.parts.get(info.filename)
                part = (
                    source.read(info)
                    if root is None
                    else etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
                )
                target.writestr(info, part)
        return out.getvalue()

"""OpenDocument text (.odt): the paragraphs and headings of content.xml and styles.xml (headers, footers)
are translated in place with lxml; every other part of the zip (the `mimetype` first and stored, as the
format requires, pictures, settings, the manifest) is copied byte for byte. A paragraph's `<text:span>` and
`<text:a>` come back around the translation of their own text; spaces, tabs, line breaks, bookmarks,
fields, notes and frames stay whole, in their order (a frame's or a note's own paragraphs are translated
as paragraphs of their own)."""

from __future__ import annotations

import io
import zipfile

from lxml import etree

from shared.document_formats import DocumentError
from worker.documents.formats.docx_archive import ODT, check_archive
from worker.documents.formats.limits import DocumentLimits
from worker.documents.formats.placement import TranslatedRun
from worker.documents.formats.runs import CLOSE, OPEN, TextRun
from worker.documents.formats.xml_text import append_text

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_PARAGRAPHS = (f"{{{_TEXT}}}p", f"{{{_TEXT}}}h")
_PAIRED = (f"{{{_TEXT}}}span", f"{{{_TEXT}}}a")
_PARTS = ("content.xml", "styles.xml")


class OdtDocument:
    def __init__(self, data: bytes, limits: DocumentLimits | None = None):
        check_archive(data, limits or DocumentLimits(), ODT)
        self.data = data
        self.parts: dict[str, etree._Element] = {}
        self.runs: list[TextRun] = []
        self.paragraphs: list[tuple[etree._Element, list[etree._Element]]] = []
        parser = etree.XMLParser(resolve_entities=False, no_network=True)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for name in _PARTS:
                if name not in archive.namelist():
                    continue
                try:
                    root = etree.fromstring(archive.read(name), parser)
                except etree.XMLSyntaxError as exc:
                    raise DocumentError(f"not a valid .odt file: {name} is not well-formed XML ({exc})") from None
                if root.getroottree().docinfo.internalDTD is not None:
                    raise DocumentError(f"not a valid .odt file: {name} has a DOCTYPE")
                self.parts[name] = root
                for paragraph in root.iter(*_PARAGRAPHS):
                    run, elements = TextRun(), []
                    _read_inline(paragraph, run, elements)
                    if run.translatable:
                        self.runs.append(run)
                        self.paragraphs.append((paragraph, elements))

    def render(self, translated: list[TranslatedRun]) -> bytes:
        for (paragraph, elements), run, translation in zip(self.paragraphs, self.runs, translated):
            if translation.text.strip():  # a blank translation keeps the source's text
                _write_inline(paragraph, run, elements, translation)
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(self.data)) as source, zipfile.ZipFile(out, "w") as target:
            for info in source.infolist():
                root = self.parts.get(info.filename)
                part = (
                    source.read(info) if root is None else etree.tostring(root, xml_declaration=True, encoding="UTF-8")
                )
                target.writestr(info, part)
        return out.getvalue()


def _read_inline(element: etree._Element, run: TextRun, elements: list[etree._Element]) -> None:
    run.add(element.text or "")
    for child in element:
        if child.tag in _PAIRED:
            opened = run.open()
            elements.append(child)
            _read_inline(child, run, elements)
            run.close(opened)
            elements.append(child)
        else:  # a space, tab, line break, field, note or frame (a comment too): kept whole
            run.point("")
            elements.append(child)
        run.add(child.tail or "")


def _write_inline(
    paragraph: etree._Element, run: TextRun, elements: list[etree._Element], translation: TranslatedRun
) -> None:
    """Rebuild the paragraph's content: spans anew (their attributes kept), every other child moved back
    as it is (a frame's paragraphs may have been translated in place)."""
    for element in elements:
        element.tail = None
    paragraph.text = None
    for child in list(paragraph):
        paragraph.remove(child)
    stack, position = [paragraph], 0
    for index, (event, element, offset) in enumerate(zip(run.events, elements, translation.offsets)):
        append_text(stack[-1], translation.text[position:offset])
        position = offset
        if event.kind == OPEN:
            stack.append(etree.SubElement(stack[-1], element.tag, dict(element.attrib)))
            append_text(stack[-1], translation.fills.get(index, ""))
        elif event.kind == CLOSE:
            stack.pop()
        else:
            stack[-1].append(element)
    append_text(stack[-1], translation.text[position:])

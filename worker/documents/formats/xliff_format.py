"""XLIFF 1.2 and 2.x files: translate-toolkit reads them (with its parser for untrusted XML: no entities
resolved, no network) and writes them back, so ids, notes, contexts, groups and every attribute stay as
they were. Each translatable unit (XLIFF 2: segment) without a target gets one (with `retranslate`, every
unit's target is rewritten); its inline elements come back in the target in the same order: the paired
ones (`<g>`, `<pc>`, `<mrk>`) around the translation of their own text, the others (`<x/>`, `<ph>`,
`<bpt>`, `<sc/>`, ...) whole, as placeholders. A 1.2 target is marked `state="translated"
state-qualifier="mt-suggestion"`; an XLIFF 2 segment keeps its state (`initial` unless the file says
otherwise), so a reviewer sees what is machine output. A DOCTYPE is refused: XLIFF has none, and entity
declarations are how an XML file grows as it is read."""

from __future__ import annotations

import copy

from lxml import etree
from translate.misc.xml_helpers import parse_xml
from translate.storage.xliff import xlifffile
from translate.storage.xliff2 import Xliff2File

from shared.document_formats import DocumentError
from worker.documents.formats.limits import Budget, DocumentLimits
from worker.documents.formats.placement import TranslatedRun
from worker.documents.formats.runs import CLOSE, OPEN, TextRun
from worker.documents.formats.xml_text import append_text

_PAIRED = ("g", "pc", "mrk")  # inline elements whose content is text to translate; any other is kept whole
# What XML 1.0 cannot hold (control characters but tab and line breaks, lone surrogates, U+FFFE/FFFF): a
# translation's become spaces.


class XliffDocument:
    def __init__(self, data: bytes, limits: DocumentLimits | None = None, retranslate: bool = False):
        budget = Budget(limits or DocumentLimits())
        try:
            root = parse_xml(data)
        except (etree.XMLSyntaxError, ValueError) as exc:
            raise DocumentError(f"not a valid XLIFF file: it is not well-formed XML ({exc})") from None
        if root.getroottree().docinfo.internalDTD is not None:
            raise DocumentError("not a valid XLIFF file: it has a DOCTYPE (XLIFF has none; entities are not read)")
        if etree.QName(root).localname != "xliff":
            raise DocumentError(f"not an XLIFF file: its root element is <{etree.QName(root).localname}>")
        for _ in root.iter():
            budget.spend()
        self.version = root.get("version", "")
        store_class = Xliff2File if self.version.startswith("2") else xlifffile
        try:
            self.store = store_class.parsestring(data)
        except (etree.XMLSyntaxError, ValueError, AssertionError) as exc:
            raise DocumentError(f"not a valid XLIFF {self.version} file: {exc}") from None
        self.runs: list[TextRun] = []
        self.units: list[tuple[etree._Element, list[etree._Element]]] = []  # (source, each event's element)
        for unit in self.store.units:
            source = unit.source_dom
            if source is None or not unit.istranslatable():
                continue
            target = unit.get_target_dom()
            if target is not None and "".join(target.itertext()).strip() and not retranslate:
                continue
            run, elements = TextRun(), []
            _read_inline(source, run, elements)
            if run.translatable:
                self.runs.append(run)
                self.units.append((source, elements))

    def render(self, translated: list[TranslatedRun]) -> bytes:
        for (source, elements), run, translation in zip(self.units, self.runs, translated):
            target = _target_of(source)
            _write_inline(target, run, elements, translation)
            if not self.version.startswith("2"):
                target.set("state", "translated")
                target.set("state-qualifier", "mt-suggestion")
        return bytes(self.store)


def _read_inline(element: etree._Element, run: TextRun, elements: list[etree._Element]) -> None:
    """Add the element's text to `run`, its inline children as events (`elements`: each event's child)."""
    run.add(element.text or "")
    for child in element:
        if not isinstance(child.tag, str):  # a comment or processing instruction: its tail is text
            pass
        elif etree.QName(child).localname in _PAIRED:
            opened = run.open()
            elements.append(child)
            _read_inline(child, run, elements)
            run.close(opened)
            elements.append(child)
        else:
            run.point("")
            elements.append(child)
        run.add(child.tail or "")


def _target_of(source: etree._Element) -> etree._Element:
    """The unit's target, emptied (its attributes kept), or a new one just after the source."""
    tag = f"{{{etree.QName(source).namespace}}}target" if etree.QName(source).namespace else "target"
    target = source.getnext()
    while target is not None and not (isinstance(target.tag, str) and target.tag == tag):
        target = target.getnext()
    if target is None:
        target = etree.Element(tag)
        target.tail = source.tail
        source.addnext(target)
    target.text = None
    for child in list(target):
        target.remove(child)
    return target


def _write_inline(
    target: etree._Element, run: TextRun, elements: list[etree._Element], translation: TranslatedRun
) -> None:
    stack, position = [target], 0
    for index, (event, element, offset) in enumerate(zip(run.events, elements, translation.offsets)):
        append_text(stack[-1], translation.text[position:offset])
        position = offset
        if event.kind == OPEN:
            stack.append(etree.SubElement(stack[-1], element.tag, dict(element.attrib)))
            append_text(stack[-1], translation.fills.get(index, ""))
        elif event.kind == CLOSE:
            stack.pop()
        else:
            kept = copy.deepcopy(element)
            kept.tail = None
            stack[-1].append(kept)
    append_text(stack[-1], translation.text[position:])

"""The structure of a document apart from its text, read by each format's own parser: two documents
with equal shapes differ in their text only."""

from __future__ import annotations

import io
from html.parser import HTMLParser
from typing import Any

import docx
import srt
from lxml import etree
from markdown_it import MarkdownIt
from translate.storage.pypo import pofile

_MARKDOWN = MarkdownIt("commonmark").enable("table").enable("strikethrough")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.shape: list[Any] = []
        self.kept: list[str] = []  # text inside elements that must not change
        self._kept_depth = 0

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.shape.append(("start", tag, attrs))
        if tag in ("script", "style", "pre", "code"):
            self._kept_depth += 1

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        self.shape.append(("end", tag))
        if tag in ("script", "style", "pre", "code"):
            self._kept_depth -= 1

    def handle_startendtag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.shape.append(("void", tag, attrs))

    def handle_comment(self, data):  # type: ignore[no-untyped-def]
        self.shape.append(("comment", data))

    def handle_decl(self, decl):  # type: ignore[no-untyped-def]
        self.shape.append(("decl", decl))

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self._kept_depth:
            self.kept.append(data)


def html_shape(source: str) -> list[Any]:
    parser = _Tags()
    parser.feed(source)
    parser.close()
    return parser.shape + [("kept", "".join(parser.kept))]


def markdown_shape(source: str) -> list[Any]:
    shape: list[Any] = []
    for token in _MARKDOWN.parse(source):
        kept = token.content if token.type in ("fence", "code_block", "html_block") else ""
        shape.append((token.type, token.tag, token.markup if token.type != "inline" else "", token.info, kept))
        for child in token.children or []:
            if child.type in ("text", "softbreak", "text_special"):
                continue
            attrs = {k: v for k, v in child.attrs.items() if k != "alt"}
            kept = child.content if child.type in ("code_inline", "html_inline") else ""
            shape.append(("  " + child.type, child.tag, attrs, kept))
    return shape


def srt_shape(source: str) -> list[Any]:
    return [(s.index, s.start, s.end, html_shape(s.content)) for s in srt.parse(source)]


def docx_shape(data: bytes) -> list[Any]:
    document = docx.Document(io.BytesIO(data))
    shape: list[Any] = []

    def paragraphs(container: Any, where: str) -> None:
        for block in container.iter_inner_content():
            if isinstance(block, docx.table.Table):
                shape.append((where, "table", len(block.rows), len(block.columns)))
                for row in block.rows:
                    for cell in row.cells:
                        paragraphs(cell, where + "/cell")
            else:
                runs: list[Any] = []
                for run in block.runs:  # neighbours of one format are one run to a reader (transq merges them)
                    form = (run.bold, run.italic, run.underline, run.style.name if run.style else None)
                    if not runs or runs[-1] != form:
                        runs.append(form)
                shape.append((where, "p", block.style.name if block.style else None, runs))

    paragraphs(document, "body")
    for section in document.sections:
        paragraphs(section.header, "header")
        paragraphs(section.footer, "footer")
    return shape


def po_shape(data: bytes) -> list[Any]:
    """Every message as translate-toolkit reads it, but its translation: header, ids, contexts, comments,
    references, flags, plural sources, obsolete entries."""
    store = pofile.parsestring(data)
    shape: list[Any] = [store.header().target if store.header() else None]
    for unit in store.units:
        sources = [str(text) for text in unit.source.strings] if unit.hasplural() else [str(unit.source)]
        comments = (unit.getnotes("translator"), unit.getnotes("developer"), unit.getlocations())
        shape.append((unit.getid(), unit.getcontext(), comments, unit.isfuzzy(), unit.isobsolete(), sources))
    return shape


def po_targets(data: bytes) -> dict[str, list[str]]:
    """Each message's translation (its plural forms), by id."""
    out = {}
    for unit in pofile.parsestring(data).units:
        target = unit.target
        out[unit.getid()] = [str(text) for text in target.strings] if hasattr(target, "strings") else [str(target)]
    return out


def _xliff_root(data: bytes) -> Any:
    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))


def xliff_shape(data: bytes) -> list[Any]:
    """Every element outside the targets: name, attributes, text (a source's exactly, the rest without the
    whitespace of indentation)."""
    shape: list[Any] = []
    for element in _xliff_root(data).iter("*"):
        if any(etree.QName(e).localname == "target" for e in (element, *element.iterancestors())):
            continue
        in_source = any(etree.QName(e).localname == "source" for e in (element, *element.iterancestors()))
        text, tail = element.text or "", element.tail or ""
        if not in_source:
            text, tail = text.strip(), tail.strip()
        elif etree.QName(element).localname == "source":
            tail = ""
        shape.append((etree.QName(element).localname, dict(element.attrib), text, tail))
    return shape


def xliff_targets(data: bytes) -> dict[str, tuple[dict[str, str], list[Any], str]]:
    """Each target by its unit's (XLIFF 2: segment's) id: its attributes, its inline elements (name and
    attributes, in order), its text."""
    out = {}
    for target in _xliff_root(data).iter("{*}target"):
        inline = [(etree.QName(e).localname, dict(e.attrib)) for e in target.iter("*") if e is not target]
        out[target.getparent().get("id")] = (dict(target.attrib), inline, "".join(target.itertext()))
    return out


def xliff_inline(data: bytes) -> dict[str, list[Any]]:
    """Each source's inline elements (name and attributes, in order), by its unit's id."""
    out = {}
    for source in _xliff_root(data).iter("{*}source"):
        out[source.getparent().get("id")] = [
            (etree.QName(e).localname, dict(e.attrib)) for e in source.iter("*") if e is not source
        ]
    return out

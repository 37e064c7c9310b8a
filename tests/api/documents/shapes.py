"""The structure of a document apart from its text, read by each format's own parser: two documents
with equal shapes differ in their text only."""

from __future__ import annotations

import io
from html.parser import HTMLParser
from typing import Any

import docx
import srt
from markdown_it import MarkdownIt

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

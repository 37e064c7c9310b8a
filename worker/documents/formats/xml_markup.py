"""XML of which only some elements' text is translated (an EPUB's book title in its package document, the
labels of its NCX table of contents): read with the HTML path's tokenizer (html_tokens.py) into a
MarkupDocument, so every byte outside those elements' text (declarations, comments, tags and attributes,
the other elements' text) is written back as it was. Inside a chosen element, child elements are inline
markup around their own words, as in HTML. The XML is well-formed (checked with lxml before)."""

from __future__ import annotations

import html
from typing import Callable

from worker.documents.formats.html_format import MarkupDocument
from worker.documents.formats.html_tokens import tokenize
from worker.documents.formats.limits import Budget
from worker.documents.formats.xml_text import NOT_XML

# Given the local names (lower case) of the open elements, outermost first: is the innermost one's text translated?
Chooser = Callable[[list[str]], bool]


def xml_escape(text: str) -> str:
    """A translation as XML text: `&`, `<` and `>` escaped, characters XML 1.0 cannot hold made spaces."""
    return NOT_XML.sub(" ", html.escape(text, quote=False))


def parse_chosen_text(source: str, chosen: Chooser, budget: Budget) -> MarkupDocument:
    """The runs of the elements `chosen` picks (each one run); everything else literal. Each tag spends a part."""
    document = MarkupDocument()
    open_names: list[str] = []
    inside = 0  # the depth of the chosen element whose text is being read (0: none)
    for token in tokenize(source, budget):
        if token.kind == "start":
            open_names.append(token.tag.rpartition(":")[2])
        if inside:
            if token.kind == "end" and len(open_names) == inside:
                document.literal(token.raw)  # ends the run
                inside = 0
            elif token.kind == "data":
                document.text(token.raw, html.unescape(token.raw) if "&" in token.raw else token.raw)
            elif token.kind == "start":
                document.inline_open(token.raw, token.tag)
            elif token.kind == "end":
                document.inline_close(token.raw, token.tag)
            else:  # an empty element, a comment, a CDATA section: kept whole where it was
                document.inline_point(token.raw)
        else:
            document.literal(token.raw)
            if token.kind == "start" and chosen(open_names):
                inside = len(open_names)
        if token.kind == "end" and open_names:
            open_names.pop()
    document.flush()
    return document

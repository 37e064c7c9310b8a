"""EPUB books (.epub, EPUB 2 and 3): the OCF zip is read here with zipfile and lxml (epub_package.py checks
it and finds what to translate), not with ebooklib, which rewrites every part it writes (a new package
document and table of contents, each chapter re-serialised) and cannot write back some books it reads (the
tests read the output with it). Translated, each through the HTML path (html_format.py), so every tag,
attribute, comment and byte around the text is kept: every XHTML content document of the spine, the EPUB 3
navigation document (the table of contents and landmarks), the NCX table of contents' title and labels
(EPUB 2; page-list numbers are kept) and the package documents' `dc:title`. Everything else (the
`mimetype` entry first and stored, META-INF, the manifest and its ids, CSS, images, fonts, authors and the
`dc:language`, as `xml:lang`/`lang` attributes are kept in every format) is copied byte for byte, in the
same order, with the same compression. A translated entry keeps its encoding (UTF-8, or UTF-16 with its
byte-order mark)."""

from __future__ import annotations

import codecs
import io
import zipfile
from dataclasses import dataclass

from worker.documents.formats.docx_archive import EPUB, check_archive
from worker.documents.formats.epub_package import read_package
from worker.documents.formats.html_format import MarkupDocument, parse_markup
from worker.documents.formats.limits import Budget, DocumentLimits
from worker.documents.formats.placement import TranslatedRun
from worker.documents.formats.runs import TextRun
from worker.documents.formats.xml_markup import parse_chosen_text, xml_escape


@dataclass
class _Entry:
    name: str
    markup: MarkupDocument
    prefix: bytes  # a byte-order mark, written back before the text
    encoding: str


class EpubDocument:
    def __init__(self, data: bytes, limits: DocumentLimits | None = None):
        limits = limits or DocumentLimits()
        check_archive(data, limits, EPUB)
        self.data = data
        self.entries: list[_Entry] = []
        self.runs: list[TextRun] = []
        elements, tags = Budget(limits), Budget(limits)  # elements counted while checked; tags while read
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            package, texts = read_package(archive, elements)
            chosen = (
                [(name, lambda text: parse_markup(text, budget=tags)) for name in package.documents]
                + [(name, lambda text: parse_chosen_text(text, _ncx_label, tags)) for name in package.tables]
                + [(name, lambda text: parse_chosen_text(text, _book_title, tags)) for name in package.packages]
            )
            done: set[str] = set()
            for name, parse in chosen:
                if name in done:
                    continue  # an entry named twice (a package document as a chapter, say) is translated once
                done.add(name)
                raw = archive.read(name)
                markup = parse(texts[name])
                if markup.runs:
                    self.entries.append(_Entry(name, markup, *_encoding(raw)))
                    self.runs += markup.runs

    def render(self, translated: list[TranslatedRun]) -> bytes:
        rewritten, position = {}, 0
        for entry in self.entries:
            mine = translated[position : position + len(entry.markup.runs)]
            position += len(entry.markup.runs)
            text = entry.markup.render(mine, xml_escape)
            rewritten[entry.name] = entry.prefix + text.encode(entry.encoding)
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(self.data)) as source, zipfile.ZipFile(out, "w") as target:
            for info in source.infolist():
                part = rewritten.get(info.filename)
                target.writestr(info, source.read(info) if part is None else part)
        return out.getvalue()


def _encoding(raw: bytes) -> tuple[bytes, str]:
    if raw.startswith(codecs.BOM_UTF16_LE):
        return codecs.BOM_UTF16_LE, "utf-16-le"
    if raw.startswith(codecs.BOM_UTF16_BE):
        return codecs.BOM_UTF16_BE, "utf-16-be"
    if raw.startswith(codecs.BOM_UTF8):
        return codecs.BOM_UTF8, "utf-8"
    return b"", "utf-8"


def _ncx_label(open_names: list[str]) -> bool:
    """An NCX's book title and its table of contents' labels (not its page list's numbers)."""
    return open_names[-2:] in (["navlabel", "text"], ["doctitle", "text"]) and "pagelist" not in open_names


def _book_title(open_names: list[str]) -> bool:
    return open_names[-1:] == ["title"] and open_names[-2:-1] in (["metadata"], ["dc-metadata"])

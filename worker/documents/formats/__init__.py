"""Documents that keep their formatting: plain text, HTML, Markdown, SubRip subtitles, Word files, Excel
workbooks, PowerPoint presentations, OpenDocument text, EPUB books, and the translators' formats, gettext PO and XLIFF 1.2/2.x.

A document is parsed into runs (runs.py); the job translates each run's sentences (and the spans inside
them) as its texts, so the sentence cache, batching and progress work as for any job; the document stage
rebuilds the document from its stored source and those translations (placement.py puts the markup back).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from shared.document_formats import FILE_FORMATS, DocumentError, DocumentTooComplex, decode_text
from worker.documents.formats.docx_format import DocxDocument
from worker.documents.formats.epub_format import EpubDocument
from worker.documents.formats.html_format import parse_markup
from worker.documents.formats.limits import Budget, DocumentLimits
from worker.documents.formats.markdown_format import MarkdownDocument
from worker.documents.formats.odt_format import OdtDocument
from worker.documents.formats.placement import TranslatedRun, translate_run
from worker.documents.formats.po_format import PoDocument
from worker.documents.formats.pptx_format import PptxDocument
from worker.documents.formats.runs import RunPlan, TextRun, plan_run
from worker.documents.formats.srt_format import SrtDocument
from worker.documents.formats.xliff_format import XliffDocument
from worker.documents.formats.xlsx_format import XlsxDocument

__all__ = ["DocumentError", "DocumentTooComplex", "DocumentLimits", "Prepared", "prepare"]


class _Parsed(Protocol):
    runs: list[TextRun]

    def render(self, translated: list[TranslatedRun]) -> Any: ...


class _PlainText:
    """A text file: one run, its layout (paragraphs, blank lines) kept by the sentence splitter."""

    def __init__(self, source: str, budget: Budget | None = None):
        run = TextRun(source)
        self.runs = [run] if run.translatable else []
        self.source = source

    def render(self, translated: list[TranslatedRun]) -> str:
        return translated[0].text if translated else self.source


_PARSERS = {
    "text": _PlainText,
    "html": lambda text, budget: parse_markup(text, budget=budget),
    "markdown": MarkdownDocument,
    "srt": SrtDocument,
}
# Files (bytes), each read by its own library: (data, limits, retranslate) -> a parsed document.
_FILE_PARSERS = {
    "docx": lambda data, limits, retranslate: DocxDocument(data, limits),
    "po": PoDocument,
    "xliff": XliffDocument,
    "xlsx": lambda data, limits, retranslate: XlsxDocument(data, limits),
    "pptx": lambda data, limits, retranslate: PptxDocument(data, limits),
    "odt": lambda data, limits, retranslate: OdtDocument(data, limits),
    "epub": lambda data, limits, retranslate: EpubDocument(data, limits),
}


# A translation's own line breaks would end a SubRip cue or start a Markdown block: they become spaces.
_ONE_LINE_FORMATS = ("markdown", "srt")
_LINE_BREAKS = re.compile("[ \t]*[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029]+[ \t]*")


@dataclass
class Prepared:
    """A parsed document and what it sends to be translated."""

    format: str
    parsed: _Parsed
    plans: list[RunPlan]

    @property
    def units(self) -> list[str]:
        return [unit for plan in self.plans for unit in plan.units]

    def render(self, translations: list[str]) -> str | bytes:
        """The document with `translations` (one per unit, in order) in place of its text."""
        if self.format in _ONE_LINE_FORMATS:  # and a blank one keeps its source (a block would vanish)
            translations = [
                _LINE_BREAKS.sub(" ", translation) if translation.strip() else unit
                for translation, unit in zip(translations, self.units)
            ]
        it = iter(translations)
        translated = []
        for run, plan in zip(self.parsed.runs, self.plans):
            mine = iter([next(it) for _ in range(len(plan.units))])
            translated.append(translate_run(run, plan, mine, snap=self.format == "markdown"))
        return self.parsed.render(translated)


def prepare(
    format: str,
    source: str | bytes,
    max_sentence_chars: int,
    limits: DocumentLimits | None = None,
    retranslate: bool = False,
) -> Prepared:
    """Parse a document; DocumentError when it is not well-formed, DocumentTooComplex when it is over
    `limits` (by default those of the TRANSQ_* settings in the environment). `retranslate`: a PO or XLIFF
    file's translated units are translated again (by default they are kept)."""
    limits = limits or DocumentLimits.from_env()
    if format in FILE_FORMATS:
        if not isinstance(source, bytes):
            raise DocumentError(f"a {format} document is a file: upload it to /v1/documents")
        parsed: _Parsed = _FILE_PARSERS[format](source, limits, retranslate)
    else:
        text = source if isinstance(source, str) else decode_text(source)
        parsed = _PARSERS[format](text, Budget(limits))
    return Prepared(format, parsed, [plan_run(run, max_sentence_chars) for run in parsed.runs])

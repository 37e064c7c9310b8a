"""Documents that keep their formatting: plain text, HTML, Markdown, SubRip subtitles and Word files.

A document is parsed into runs (runs.py); the job translates each run's sentences (and the spans inside
them) as its texts, so the sentence cache, batching and progress work as for any job; the document stage
rebuilds the document from its stored source and those translations (placement.py puts the markup back).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Any, Protocol

from api.documents.formats.docx_format import DocxDocument
from api.documents.formats.errors import DocumentError, DocumentTooComplex
from api.documents.formats.html_format import parse_markup
from api.documents.formats.limits import Budget, DocumentLimits
from api.documents.formats.markdown_format import MarkdownDocument
from api.documents.formats.placement import TranslatedRun, translate_run
from api.documents.formats.runs import RunPlan, TextRun, plan_run
from api.documents.formats.srt_format import SrtDocument

__all__ = [
    "DocumentError",
    "DocumentTooComplex",
    "DocumentLimits",
    "FORMATS",
    "TEXT_FORMATS",
    "EXTENSIONS",
    "MEDIA_TYPES",
    "Prepared",
    "prepare",
    "decode_text",
]

FORMATS = ("text", "html", "markdown", "srt", "docx")
TEXT_FORMATS = ("text", "html", "markdown", "srt")  # the formats a JSON string can carry
EXTENSIONS = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".srt": "srt",
    ".docx": "docx",
}
FILE_EXTENSIONS = {"text": ".txt", "html": ".html", "markdown": ".md", "srt": ".srt", "docx": ".docx"}
MEDIA_TYPES = {
    "text": "text/plain; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
    "srt": "application/x-subrip; charset=utf-8",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


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
    format: str, source: str | bytes, max_sentence_chars: int, limits: DocumentLimits | None = None
) -> Prepared:
    """Parse a document; DocumentError when it is not well-formed, DocumentTooComplex when it is over
    `limits` (by default those of the TRANSQ_* settings in the environment)."""
    limits = limits or DocumentLimits.from_env()
    if format == "docx":
        if not isinstance(source, bytes):
            raise DocumentError("a .docx document is a file: upload it to /v1/documents")
        parsed: _Parsed = DocxDocument(source, limits)
    else:
        text = source if isinstance(source, str) else decode_text(source)
        parsed = _PARSERS[format](text, Budget(limits))
    return Prepared(format, parsed, [plan_run(run, max_sentence_chars) for run in parsed.runs])


def decode_text(data: bytes) -> str:
    """UTF-8 (a byte-order mark allowed), or UTF-16 with its byte-order mark."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise DocumentError("the file is not valid UTF-16 text") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"the file is not UTF-8 text (byte {exc.start})") from None

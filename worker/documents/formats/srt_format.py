"""SubRip subtitles: the `srt` library reads and writes the file; numbering and timings are kept as they
are, each subtitle's text is translated (its lines joined, so a sentence over two lines stays whole, and
split again in two near the middle), and its `<i>`/`<b>`/`<font>` tags come back around the words."""

from __future__ import annotations

import re

import srt

from shared.document_formats import DocumentError, DocumentTooComplex
from worker.documents.formats.html_format import MarkupDocument, parse_markup
from worker.documents.formats.limits import Budget, DocumentLimits
from worker.documents.formats.placement import TranslatedRun
from worker.documents.formats.runs import TextRun

_NEWLINES = re.compile(r"\r\n?")


def normalise_newlines(source: str) -> str:
    """CRLF and a lone CR (old Mac files) read as LF: every cue boundary is a blank line of `\n`s."""
    return _NEWLINES.sub("\n", source) if "\r" in source else source


class SrtDocument:
    def __init__(self, source: str, budget: Budget | None = None):
        budget = budget or Budget(DocumentLimits())
        self.subtitles: list[srt.Subtitle] = []
        try:
            for subtitle in srt.parse(normalise_newlines(source)):
                budget.spend()
                self.subtitles.append(subtitle)
        except DocumentTooComplex:
            raise
        except (srt.SRTParseError, ValueError) as exc:
            raise DocumentError(f"not a valid SubRip file: {exc}") from None
        if not self.subtitles:
            raise DocumentError("the SubRip file holds no subtitles")
        self.cues: list[MarkupDocument] = []
        self.line_counts: list[int] = []
        self.runs: list[TextRun] = []
        for subtitle in self.subtitles:
            lines = subtitle.content.split("\n")
            cue = parse_markup(" ".join(lines), all_inline=True, entities=False, budget=budget)
            self.cues.append(cue)
            self.line_counts.append(len(lines))
            self.runs += cue.runs

    def render(self, translated: list[TranslatedRun]) -> str:
        position = 0
        out = []
        for subtitle, cue, lines in zip(self.subtitles, self.cues, self.line_counts):
            count = len(cue.runs)
            text = cue.render(translated[position : position + count])
            position += count
            content = _two_lines(text) if lines > 1 else text
            # A blank line would end the cue: never one inside it (an empty translation keeps the source's).
            content = "\n".join(line for line in content.split("\n") if line.strip()) or subtitle.content
            out.append(srt.Subtitle(subtitle.index, subtitle.start, subtitle.end, content, subtitle.proprietary))
        return srt.compose(out, reindex=False, strict=False)


def _two_lines(text: str) -> str:
    """Break at the space nearest the middle that is outside a tag."""
    depth, spaces = 0, []
    for index, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(0, depth - 1)
        elif char == " " and depth == 0:
            spaces.append(index)
    if not spaces:
        return text
    cut = min(spaces, key=lambda index: abs(index - len(text) / 2))
    return text[:cut] + "\n" + text[cut + 1 :]

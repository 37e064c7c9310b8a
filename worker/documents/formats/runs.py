"""A run of text with inline markup, and what of it is sent to be translated.

A document format turns its text into runs: the plain text of one block (a paragraph, a heading, a
table cell, a subtitle) and its inline markup as events at offsets into that text (a tag opening or
closing a span, or a point such as a line break or an inline code span). The run's sentences are
translated whole, with the markup taken out, so a tag inside a sentence never splits it; a span inside
one sentence is also translated on its own (placement.py puts the markup back).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from shared.text.splitter import Segment, split_text

OPEN, CLOSE, POINT = "open", "close", "point"


@dataclass
class Event:
    """Markup at `offset` in the run's text: written as `markup` (formats that rebuild their own
    markup, such as docx, leave it empty). `pair` is the index of the matching open or close event."""

    offset: int
    kind: str = POINT
    markup: str = ""
    pair: int = -1


class TextRun:
    """The text of one block and its markup events. Text is added in pieces (joined once, when read), so
    a block of many small pieces costs time in proportion to its length."""

    def __init__(self, text: str = "", events: list[Event] | None = None):
        self._pieces = [text] if text else []
        self._length = len(text)
        self._text: str | None = text
        self.events: list[Event] = events if events is not None else []

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self._pieces)
            self._pieces = [self._text]
        return self._text

    def add(self, text: str) -> None:
        if text:
            self._pieces.append(text)
            self._length += len(text)
            self._text = None

    def open(self, markup: str = "") -> int:
        self.events.append(Event(self._length, OPEN, markup))
        return len(self.events) - 1

    def close(self, opened: int, markup: str = "") -> None:
        self.events.append(Event(self._length, CLOSE, markup, pair=opened))
        self.events[opened].pair = len(self.events) - 1

    def point(self, markup: str) -> None:
        self.events.append(Event(self._length, POINT, markup))

    @property
    def translatable(self) -> bool:
        return any(ch.isalnum() for ch in self.text)


@dataclass(frozen=True)
class _Sentence:
    start: int
    end: int


@dataclass
class RunPlan:
    """What a run sends to be translated: its segments, then the spans to look for in its sentences."""

    segments: list[Segment]
    starts: list[int]  # source offset of each segment
    spans: list[tuple[int, int]]  # (open event, close event) whose text is translated on its own
    span_texts: list[str]

    @property
    def units(self) -> list[str]:
        return [s.text for s in self.segments if s.translate] + self.span_texts


def plan_run(run: TextRun, max_sentence_chars: int) -> RunPlan:
    segments = split_text(run.text, max_sentence_chars)
    starts, position = [], 0
    for segment in segments:
        starts.append(position)
        position += len(segment.text)
    sentences = [_Sentence(s, s + len(g.text)) for s, g in zip(starts, segments) if g.translate]
    sentence_starts = [sentence.start for sentence in sentences]
    spans, texts = [], []
    for index, event in enumerate(run.events):
        if event.kind != OPEN or event.pair < 0:
            continue
        start, end = event.offset, run.events[event.pair].offset
        inner = run.text[start:end].strip()
        home = _containing(sentences, sentence_starts, start, end)
        if home and any(ch.isalnum() for ch in inner) and (start, end) != (home.start, home.end):
            spans.append((index, event.pair))
            texts.append(inner)
    return RunPlan(segments, starts, spans, texts)


def _containing(sentences: list[_Sentence], starts: list[int], start: int, end: int) -> _Sentence | None:
    """The sentence holding [start, end] (sentences do not overlap: the last one starting at or before
    `start` is the only candidate)."""
    index = bisect.bisect_right(starts, start) - 1
    if index >= 0 and end <= sentences[index].end:
        return sentences[index]
    return None

"""Split Chinese and English text into sentences and join translations back with its layout.

A text becomes a list of segments. Sentence segments are translated; the others
(whitespace, line breaks, spans with nothing to translate such as emoji or a lone
punctuation mark) are copied to the output as they are, so paragraphs survive.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Iterable, Iterator, NamedTuple

from shared.errors import ValidationError

if TYPE_CHECKING:
    from shared.settings import Settings

# Terminators: Chinese full stop, exclamation, question, semicolon; their ASCII
# forms; the ellipsis. An ASCII full stop only ends a sentence before whitespace
# (so 3.14 and example.com stay whole). Closing quotes and brackets stay with
# the sentence they close.
_CLOSERS = "\"'”’」』）)】》〉\\]"
_SENTENCE = re.compile(
    rf"""
    (?: [^\n。！？；!?;….]+ | \.(?!\s|$) )*           # the sentence: no terminator, no line break
    (?: (?:[。！？；!?;]|…+|\.(?=\s|$))+ [{_CLOSERS}]*   # its terminator(s)
      | (?=\n) | $ )                                 # or the end of the line
    """,
    re.VERBOSE,
)
# The sentence part is a greedy run of characters that cannot end it, so a match costs one pass over its
# text and never backtracks: what stops the run is always a terminator, a line break or the end.
_SOFT_BREAKS = "，,、：:"
_JOINERS = {"\u200d", "\ufe0f", "\ufe0e"}
# A cut moves left at most this far to keep a character with its marks and joiners (the longest emoji
# sequences are about a dozen code points); a longer run is cut where it is.
_LONGEST_CLUSTER = 32


class Segment(NamedTuple):
    text: str
    translate: bool


def split_text(text: str, max_sentence_chars: int = 300) -> list[Segment]:
    """Segments of `text`, in order; concatenating their texts gives `text` back."""
    segments: list[Segment] = []
    pos = 0
    for match in _SENTENCE.finditer(text):
        start, end = match.span()
        if end == start:
            continue
        if start > pos:
            segments.append(Segment(text[pos:start], False))
        _append_sentence(segments, match.group(), max_sentence_chars)
        pos = end
    if pos < len(text):
        segments.append(Segment(text[pos:], False))
    return _merge_gaps(segments)


def _append_sentence(segments: list[Segment], chunk: str, max_chars: int) -> None:
    """Add a matched chunk: leading and trailing whitespace become gaps."""
    stripped = chunk.strip()
    if not stripped:
        segments.append(Segment(chunk, False))
        return
    lead = chunk[: len(chunk) - len(chunk.lstrip())]
    trail = chunk[len(chunk.rstrip()) :]
    if lead:
        segments.append(Segment(lead, False))
    translatable = any(ch.isalnum() for ch in stripped)
    for piece in split_long(stripped, max_chars) if translatable else [stripped]:
        segments.append(Segment(piece, translatable))
    if trail:
        segments.append(Segment(trail, False))


def split_long(sentence: str, max_chars: int) -> list[str]:
    """Cut a sentence over `max_chars` at a comma, else a space, else anywhere safe. Linear in the
    sentence's length: it walks one offset forward and never copies the rest."""
    pieces: list[str] = []
    start, end = 0, len(sentence)
    while end - start > max_chars:
        limit = start + max_chars
        cut = max(sentence.rfind(ch, start, limit) for ch in _SOFT_BREAKS) + 1
        if cut - start <= max_chars // 4:
            cut = sentence.rfind(" ", start, limit) + 1
        if cut - start <= max_chars // 4:
            cut = _safe_cut(sentence, limit, max(start + max_chars // 2, limit - _LONGEST_CLUSTER))
        head = sentence[start:cut].strip()
        if head:
            pieces.append(head)
        start = cut
        while start < end and sentence[start].isspace():
            start += 1
    if start < end:
        pieces.append(sentence[start:end])
    return pieces


def _safe_cut(text: str, cut: int, lowest: int) -> int:
    """Move a cut left, not below `lowest`, so it does not separate a combining mark or a joiner from
    its character; a run of joiners longer than that is cut where it is (bounded work per piece)."""
    position = cut
    while position > lowest and (
        unicodedata.combining(text[position]) or text[position] in _JOINERS or text[position - 1] in _JOINERS
    ):
        position -= 1
    return position if position > lowest else cut


def _merge_gaps(segments: list[Segment]) -> list[Segment]:
    merged: list[Segment] = []
    for seg in segments:
        if merged and not seg.translate and not merged[-1].translate:
            merged[-1] = Segment(merged[-1].text + seg.text, False)
        else:
            merged.append(seg)
    return merged


def sentences(segments: Iterable[Segment]) -> list[str]:
    """The texts to translate, in order."""
    return [s.text for s in segments if s.translate]


def join_translations(segments: list[Segment], translations: Iterable[str]) -> str:
    """Put translations in place of the sentence segments, keeping every gap.

    Two sentences that touched in the source (Chinese needs no space after 。)
    get one space between their translations.
    """
    it: Iterator[str] = iter(translations)
    out: list[str] = []
    previous: Segment | None = None
    for seg in segments:
        if needs_space(previous, seg):
            out.append(" ")
        out.append(next(it) if seg.translate else seg.text)
        previous = seg
    return "".join(out)


def needs_space(previous: Segment | None, segment: Segment) -> bool:
    """Whether a space goes between two segments' outputs: they touched in the source, and one of them is
    a translated sentence."""
    return (
        previous is not None
        and (segment.translate or previous.translate)
        and not previous.text[-1:].isspace()
        and not segment.text[:1].isspace()
    )


def split_texts(texts: list[str], settings: Settings, what: str) -> tuple[list[list[Segment]], list[str]]:
    """Each text's segments and all the sentences, within TRANSQ_MAX_SENTENCES."""
    segments = [split_text(text, settings.max_sentence_chars) for text in texts]
    flat = [s for segs in segments for s in sentences(segs)]
    if len(flat) > settings.max_sentences:
        raise ValidationError(f"{what} {len(flat)} sentences; at most {settings.max_sentences} are allowed")
    return segments, flat


def spans_of(text: str, segments: list[Segment]) -> list[int]:
    """Where a text's segments are, as flat [start, end, translate (1 or 0), ...] character offsets: what a
    job stores of its split (shared.store.job_record.Job.spans), so the worker reads the API's split instead
    of splitting again (with its own TRANSQ_MAX_SENTENCE_CHARS). A long sentence's pieces leave out the
    whitespace they were cut at, so each segment is found after the last rather than assumed to follow it."""
    spans, position = [], 0
    for segment in segments:
        start = text.find(segment.text, position)
        if start < 0:
            raise ValueError("a segment is not part of its text")
        position = start + len(segment.text)
        spans += [start, position, int(segment.translate)]
    return spans


def segments_at(text: str, spans: list[int]) -> list[Segment]:
    """The segments of `text` at `spans` (spans_of's): split_text's segments again, exactly."""
    if len(spans) % 3:
        raise ValueError("sentence spans come in threes: start, end, translate")
    segments = []
    for start, end, translate in zip(spans[::3], spans[1::3], spans[2::3]):
        if not 0 <= start <= end <= len(text):
            raise ValueError(f"a segment at {start}:{end} does not fit a text of {len(text)} characters")
        segments.append(Segment(text[start:end], bool(translate)))
    return segments

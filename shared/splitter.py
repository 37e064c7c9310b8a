"""Split Chinese and English text into sentences and join translations back with its layout.

A text becomes a list of segments. Sentence segments are translated; the others
(whitespace, line breaks, spans with nothing to translate such as emoji or a lone
punctuation mark) are copied to the output as they are, so paragraphs survive.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Iterator, NamedTuple

# Terminators: Chinese full stop, exclamation, question, semicolon; their ASCII
# forms; the ellipsis. An ASCII full stop only ends a sentence before whitespace
# (so 3.14 and example.com stay whole). Closing quotes and brackets stay with
# the sentence they close.
_CLOSERS = "\"'”’」』）)】》〉\\]"
_SENTENCE = re.compile(
    rf"""
    [^\n]*?                                    # the sentence, lazily
    (?: (?:[。！？；!?;]|…+|\.(?=\s|$))+ [{_CLOSERS}]*   # its terminator(s)
      | (?=\n) | $ )                           # or the end of the line
    """,
    re.VERBOSE,
)
_SOFT_BREAKS = "，,、：:"
_JOINERS = {"\u200d", "\ufe0f", "\ufe0e"}


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
    """Cut a sentence over `max_chars` at a comma, else a space, else anywhere safe."""
    pieces: list[str] = []
    rest = sentence
    while len(rest) > max_chars:
        window = rest[:max_chars]
        cut = max(window.rfind(ch) for ch in _SOFT_BREAKS) + 1
        if cut <= max_chars // 4:
            cut = window.rfind(" ") + 1
        if cut <= max_chars // 4:
            cut = _safe_cut(rest, max_chars)
        head, rest = rest[:cut].strip(), rest[cut:].strip()
        if head:
            pieces.append(head)
    if rest:
        pieces.append(rest)
    return pieces


def _safe_cut(text: str, cut: int) -> int:
    """Move a cut left so it never separates a combining mark, joiner or surrogate-free cluster."""
    while cut > 1 and (unicodedata.combining(text[cut]) or text[cut] in _JOINERS or text[cut - 1] in _JOINERS):
        cut -= 1
    return cut


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
        piece = next(it) if seg.translate else seg.text
        if (
            previous is not None
            and (seg.translate or previous.translate)
            and not previous.text[-1:].isspace()
            and not seg.text[:1].isspace()
        ):
            out.append(" ")
        out.append(piece)
        previous = seg
    return "".join(out)

"""How a run's translation gets the run's markup back.

The markup comes back in the same order it had: each event gets an offset into the translation, and
the offsets never decrease, so the output holds every tag the input held, nested the same way. A span
inside one sentence whose own text (translated on its own) appears in that sentence's translation wraps
exactly that text; any other offset lands proportionally within its sentence, on a word boundary.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable, Iterator

from shared.text.splitter import Segment, needs_space
from worker.documents.formats.runs import CLOSE, OPEN, Event, RunPlan, TextRun


@dataclass
class TranslatedRun:
    """A run's translation and, for each of its events, an offset into it."""

    text: str
    offsets: list[int]
    fills: dict[int, str] = field(default_factory=dict)  # open event -> its span's own translation, for a
    # span that came out empty (its words were not found and its place fell between two words)


def translate_run(run: TextRun, plan: RunPlan, translations: Iterator[str], snap: bool = False) -> TranslatedRun:
    """Join the run's sentence translations (consumed from `translations`, then its span translations)
    and place its events. `snap`: an open event goes before a word and a close event after one (the
    rule of Markdown's emphasis markers)."""
    pieces: list[str] = []
    target_starts: list[int] = []
    target_ends: list[int] = []
    length = 0
    previous: Segment | None = None
    for segment in plan.segments:  # joined as shared.text.splitter.join_translations joins them
        if needs_space(previous, segment):
            pieces.append(" ")
            length += 1
        piece = next(translations) if segment.translate else segment.text
        pieces.append(piece)
        target_starts.append(length)
        length += len(piece)
        target_ends.append(length)
        previous = segment
    text = "".join(pieces)
    span_translations = [next(translations).strip() for _ in plan.spans]
    found = _locate_spans(run, plan, span_translations, text, target_starts, target_ends)
    offsets: list[int] = []
    floor = 0
    for index, event in enumerate(run.events):
        where = found.get(index)
        if where is None:
            where = _map_offset(plan, event, text, target_starts, target_ends)
        if snap:
            where = _snap(text, where, event.kind)
        floor = max(where, floor)
        offsets.append(floor)
    fills = {
        opened: _word_core(translation) if snap else translation
        for (opened, closed), translation in zip(plan.spans, span_translations)
        if offsets[opened] == offsets[closed] and translation
    }
    return TranslatedRun(text, offsets, fills)


def _map_offset(plan: RunPlan, event: Event, text: str, target_starts: list[int], target_ends: list[int]) -> int:
    """An event's offset in the translation: exact in the gaps and at sentence edges, proportional inside
    a sentence. At a segment boundary, an open event goes with the segment after, a close event with the
    segment before."""
    offset = event.offset
    if not plan.segments:
        return 0
    index = bisect.bisect_right(plan.starts, offset) - 1
    if event.kind == CLOSE and index > 0 and plan.starts[index] == offset:
        index -= 1  # the close of a span that ends where this segment starts
    index = max(index, 0)
    segment = plan.segments[index]
    start, length = plan.starts[index], len(segment.text)
    target_start, target_end = target_starts[index], target_ends[index]
    within = offset - start
    if not segment.translate:
        return target_start + min(within, target_end - target_start)
    if within <= 0:
        return target_start
    if within >= length:
        return target_end
    position = target_start + round(within / length * (target_end - target_start))
    return _nearest_word_edge(text, position, target_start, target_end)


def _nearest_word_edge(text: str, position: int, low: int, high: int) -> int:
    """The closest offset in [low, high] that starts or ends a word (a space's edge); unchanged where
    the translation has no spaces (Chinese)."""
    before = text.rfind(" ", low, max(low, min(position, high)))  # the last space before `position`
    after = text.find(" ", min(max(position, low), high), high)  # the first at or after it
    if before < 0 and after < 0:
        return position
    edges = [low, high] + [edge for space in (before, after) if space >= 0 for edge in (space, space + 1)]
    return min(edges, key=lambda edge: (abs(edge - position), edge))


def _locate_spans(
    run: TextRun,
    plan: RunPlan,
    span_translations: list[str],
    text: str,
    target_starts: list[int],
    target_ends: list[int],
) -> dict[int, int]:
    """Offsets of the spans whose own translation appears in their sentence's translation."""
    found: dict[int, int] = {}
    cursor: dict[int, int] = {}
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer: offsets must stay those of `text`
        lowered = text
    for (open_index, close_index), translation in zip(plan.spans, span_translations):
        event = run.events[open_index]
        index = bisect.bisect_right(plan.starts, event.offset) - 1
        low = max(target_starts[index], cursor.get(index, 0))
        high = target_ends[index]
        at = _find_words(text, lowered, translation, low, high) if translation else -1
        if at < 0:
            continue
        found[open_index], found[close_index] = at, at + len(translation)
        cursor[index] = at + len(translation)
    return found


def _find_words(text: str, haystack: str, words: str, low: int, high: int) -> int:
    """Where `words` first appear in text[low:high] (any case: `haystack` is `text` lower-cased) as whole
    words, or -1."""
    needle = words.lower()
    at = haystack.find(needle, low, high)
    while at >= 0:
        before = text[at - 1] if at > 0 else " "
        after = text[at + len(needle)] if at + len(needle) < len(text) else " "
        if not (before.isalnum() and needle[:1].isalnum() and " " in text) and not (
            after.isalnum() and needle[-1:].isalnum() and " " in text
        ):
            return at
        at = haystack.find(needle, at + 1, high)
    return -1


def _word_core(text: str) -> str:
    """The text from its first letter or digit to its last (the words a marker may touch)."""
    first = next((i for i, ch in enumerate(text) if ch.isalnum()), len(text))
    last = next((i for i in range(len(text) - 1, -1, -1) if text[i].isalnum()), -1)
    return text[first : last + 1]


def _snap(text: str, offset: int, kind: str) -> int:
    """Move an open event forward to the next letter or digit, a close event back after the last one
    (so that Markdown's emphasis markers, which must touch a word, still open and close)."""
    if kind == OPEN:
        while offset < len(text) and not text[offset].isalnum():
            offset += 1
    elif kind == CLOSE:
        while offset > 0 and not text[offset - 1].isalnum():
            offset -= 1
    return offset


def with_markup(translated: TranslatedRun, run: TextRun, escape: Callable[[str], str]) -> str:
    """The translation with each event's markup written at its offset; the text between is escaped."""
    out: list[str] = []
    position = 0
    for index, (event, offset) in enumerate(zip(run.events, translated.offsets)):
        out.append(escape(translated.text[position:offset]))
        out.append(event.markup)
        if index in translated.fills:
            out.append(escape(translated.fills[index]))
        position = offset
    out.append(escape(translated.text[position:]))
    return "".join(out)

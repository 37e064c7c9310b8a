"""Repeats in a text, as a reader sees a loop: `处理处理处理`, `howhow`, `。。。。。。`, `the cat the cat`.

The text is read without its spaces, character by character, so a repeat is found the same way in
Chinese, inside one Latin "word" (`howhow`) and across words. A *repeat* is a run of one unit (1 to
MAX_UNIT characters) written again right after itself: the second and later copies are its repeated
characters. A unit of one character counts from its third copy (`谢谢`, `seem`, `——` are ordinary).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_UNIT = 40  # characters: a phrase of a few words
LOOP_COPIES = 3  # a unit this many times in a row (at least LOOP_CHARS characters in all) is a loop
LOOP_CHARS = 6
LOOP_SHARE = 0.3  # or repeats making up this share of the output's characters (at least MIN_REPEATED)
MIN_REPEATED = 3


@dataclass(frozen=True)
class Repeats:
    share: float  # of the text's characters (spaces left out), how many are repeated copies
    longest: str  # the longest run of a unit written LOOP_COPIES or more times ("" when none)
    repeated: int  # characters that are repeated copies
    most_copies: int  # the most copies of one unit in a row (1: no repeat)


def _letters(text: str) -> str:
    """The text as it is read for repeats: lower case, no spaces, no digits (`1,000,000` is no loop)."""
    return "".join(ch for ch in text.lower() if not ch.isspace() and not ch.isdigit())


def find_repeats(text: str) -> Repeats:
    letters = _letters(text)
    size = len(letters)
    repeated = [False] * size
    longest = ""
    most_copies = 1
    for unit in range(1, min(MAX_UNIT, size // 2) + 1):
        start = 0
        while start + unit < size:
            if letters[start] != letters[start + unit]:
                start += 1
                continue
            end = start  # letters[start:end + unit] has period `unit`
            while end + unit < size and letters[end] == letters[end + unit]:
                end += 1
            copies = (end - start) // unit + 1
            most_copies = max(most_copies, copies)
            if copies >= (3 if unit == 1 else 2):
                for i in range(start + unit, start + copies * unit):
                    repeated[i] = True
                run = letters[start : start + copies * unit]
                if copies >= LOOP_COPIES and len(run) >= LOOP_CHARS and len(run) > len(longest):
                    longest = run
            start = end + 1
    count = sum(repeated)
    return Repeats(count / size if size else 0.0, longest, count, most_copies)


def loop(source: str, translation: str) -> str | None:
    """Why `translation` loops as a reader sees it ("repeats a phrase", "is mostly repeats"), or None.
    A repeat its source has too (`哈哈哈` copied, or `hahaha` for it: a source that repeats a unit
    LOOP_COPIES times, or is as much repeats) is no loop."""
    found = find_repeats(translation)
    if found.repeated == 0:
        return None
    own = find_repeats(source)
    if found.longest and found.longest not in _letters(source) and own.most_copies < LOOP_COPIES:
        return "repeats a phrase"
    if found.repeated >= MIN_REPEATED and found.share >= LOOP_SHARE and found.share > own.share + LOOP_SHARE / 2:
        return "is mostly repeats"
    return None

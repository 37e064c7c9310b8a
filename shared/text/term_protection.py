"""Carrying a glossary's terms through the model, so each term's target appears verbatim in the translation
and nothing of the mechanism shows (docs/api.md, "Glossaries").

First try: each matched term is replaced by a placeholder, `__1__`, `__2__`, …, the sentence is translated,
and each placeholder is replaced by its target term. The shipped copy model and its Marian tokenizer give
`__1__` back intact (tests/shared/test_glossary.py; so do `[1]`, `<1>`, `#1`, `【1】`, while `@1`, `{1}`
and `⟦1⟧` hold characters its vocabulary lacks). A real model may drop, repeat or mangle a placeholder, so
each one must come back exactly once or the sentence takes the second way: the pieces between the terms
are translated on their own and joined with the target terms (constrained insertion). A sentence that
already holds `__n__` text keeps it: its placeholders are numbered above it.

TermProtection takes one sentence through these two stages a model call at a time, so a worker's pass batches
its model inputs with every other sentence's (worker.translation.round.batch_plan); translate_with_glossary is
the same for a caller with a batch function.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from shared.text.glossary import Glossary, is_cjk

PLACEHOLDER = "__{}__"
_PLACEHOLDER = re.compile(r"__\s*(\d{1,9})\s*__")  # as written, or with spaces a model put inside

TranslateBatch = Callable[[list[str]], list[str]]


@dataclass(frozen=True)
class Slot:
    number: int
    source: str  # the text of the sentence the term matched
    target: str

    @property
    def placeholder(self) -> str:
        return PLACEHOLDER.format(self.number)


def protect(glossary: Glossary, sentence: str) -> tuple[str, list[Slot]]:
    """The sentence with each matched term replaced by its placeholder, and the slots; (sentence, []) when
    no term matches. Terms next to each other (nothing or spaces between) share one placeholder: the copy
    model mangles `__1____2__` in long sentences."""
    runs: list[tuple[int, int, list[str]]] = []  # start, end, targets
    for match in glossary.matches(sentence):
        if runs and not sentence[runs[-1][1] : match.start].strip():
            runs[-1] = (runs[-1][0], match.end, [*runs[-1][2], match.target])
        else:
            runs.append((match.start, match.end, [match.target]))
    if not runs:
        return sentence, []
    first = 1 + max((int(n) for n in _PLACEHOLDER.findall(sentence)), default=0)
    parts, slots, at = [], [], 0
    for number, (start, end, targets) in enumerate(runs, start=first):
        slot = Slot(number, sentence[start:end], join_parts(targets))
        parts += [sentence[at:start], slot.placeholder]
        slots.append(slot)
        at = end
    parts.append(sentence[at:])
    return "".join(parts), slots


def restore(translation: str, slots: Sequence[Slot]) -> str | None:
    """The translation with each slot's placeholder replaced by its target term, in one pass (a target that
    looks like a placeholder stays as written); None when a placeholder did not come back exactly once."""
    wanted = {slot.number: slot for slot in slots}
    seen = Counter(int(m.group(1)) for m in _PLACEHOLDER.finditer(translation))
    if any(seen[number] != 1 for number in wanted):
        return None

    def target(match: re.Match[str]) -> str:
        slot = wanted.get(int(match.group(1)))
        return slot.target if slot else match.group(0)

    return _PLACEHOLDER.sub(target, translation)


def translate_with_glossary(translate_batch: TranslateBatch, sentences: Sequence[str], glossary: Glossary) -> list[str]:
    """Each sentence translated with the glossary's terms in it verbatim: placeholders where they come back
    intact, constrained insertion where not. At most two calls of `translate_batch` (list[str] -> list[str],
    the engine's batch call), each text once; a sentence no term matches is translated as it is."""
    states = {sentence: TermProtection(glossary, sentence) for sentence in dict.fromkeys(sentences)}
    while waiting := [state for state in states.values() if state.translation is None]:
        texts = list(dict.fromkeys(text for state in waiting for text in state.inputs))
        translated = dict(zip(texts, translate_batch(texts)))
        for state in waiting:
            state.take([translated[text] for text in state.inputs])
    return [str(states[sentence].translation) for sentence in sentences]


class TermProtection:
    """One sentence on its way through the model with a glossary's terms, a stage at a time, for a caller that
    batches many sentences' model inputs with others (a worker's pass: worker.translation.round.batch_plan).
    `inputs` are the texts the model must translate now; `take` gets their translations, after which
    `translation` is set, or `inputs` holds the second stage's: the pieces between the terms, when a placeholder
    did not come back. A stage with nothing to translate is passed at once (a sentence of terms only needs no
    model), so `inputs` is empty only once `translation` is set."""

    def __init__(self, glossary: Glossary, sentence: str):
        self.glossary, self.sentence = glossary, sentence
        self.text, self.slots = protect(glossary, sentence)
        self.translation: str | None = None
        self.parts: list[tuple[bool, str]] | None = None  # constrained insertion's, once a placeholder was lost
        words = not self.slots or _has_words(_PLACEHOLDER.sub("", self.text))
        self.inputs: list[str] = [self.text] if words else []
        if not self.inputs:
            self.take([])

    def take(self, outputs: Sequence[str]) -> None:
        """The model's translation of each of `inputs`, in order."""
        if self.translation is not None or len(outputs) != len(self.inputs):
            raise ValueError(f"{len(outputs)} translations for {len(self.inputs)} inputs of a sentence")
        if self.parts is None:  # the placeholders' stage
            restored = restore(outputs[0] if outputs else self.text, self.slots)
            if restored is not None:
                self.translation, self.inputs = restored, []
                return
            self.parts = insertion_parts(self.glossary, self.sentence)
            self.inputs = list(dict.fromkeys(text for piece, text in self.parts if piece))
            if self.inputs:
                return
        translated = dict(zip(self.inputs, outputs))
        self.translation = join_parts([translated[text] if piece else text for piece, text in self.parts])
        self.inputs = []


def insert_terms(translate_batch: TranslateBatch, sentences: Sequence[str], glossary: Glossary) -> dict[str, str]:
    """Constrained insertion: the pieces between the terms translated on their own (one batch call for all),
    joined with the target terms."""
    plans = [insertion_parts(glossary, sentence) for sentence in sentences]
    pieces = list(dict.fromkeys(text for parts in plans for piece, text in parts if piece))
    translated = dict(zip(pieces, translate_batch(pieces) if pieces else []))
    return {
        sentence: join_parts([translated[text] if piece else text for piece, text in parts])
        for sentence, parts in zip(sentences, plans)
    }


def insertion_parts(glossary: Glossary, sentence: str) -> list[tuple[bool, str]]:
    """The sentence as constrained insertion takes it: (to translate, text) for each piece between the terms,
    and (False, target) for each term. A piece with no letters or digits (punctuation, spaces) is kept as it is."""
    parts, at = [], 0
    for match in glossary.matches(sentence):
        parts += [(True, sentence[at : match.start].strip()), (False, match.target)]
        at = match.end
    parts.append((True, sentence[at:].strip()))
    return [(piece and _has_words(text), text) for piece, text in parts if text]


def join_parts(parts: Sequence[str]) -> str:
    """Parts of a translation joined with a space between two (`Hello,` `Beijing` -> `Hello, Beijing`), except
    next to CJK text, after an opening bracket or before closing punctuation (`Beijing` `!` -> `Beijing!`)."""
    out = ""
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if out and not (is_cjk(out[-1]) or out[-1] in "([{“‘" or is_cjk(part[0]) or part[0] in ",.;:!?)]}%”’"):
            out += " "
        out += part
    return out


def _has_words(text: str) -> bool:
    return any(char.isalnum() for char in text)

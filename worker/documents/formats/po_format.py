"""gettext PO (and POT) files: translate-toolkit reads and writes them, so the header, comments, references,
flags, contexts and obsolete entries come back as they were. Each untranslated message is translated (with
`retranslate`, every message); a plural message's singular fills msgstr[0] and its plural the other forms
(as many as the header's Plural-Forms names; a single form takes the plural). printf and brace
placeholders (`%s`, `%(name)d`, `%1$s`, `{count}`) are taken out of the text and put back in the same
order, so `msgfmt --check` finds the same format directives in the translation."""

from __future__ import annotations

import re
from typing import Callable

from translate.misc.multistring import multistring
from translate.storage.poparser import PoParseError
from translate.storage.pypo import pofile, pounit

from shared.document_formats import DocumentError
from worker.documents.formats.limits import Budget, DocumentLimits
from worker.documents.formats.placement import TranslatedRun, with_markup
from worker.documents.formats.runs import TextRun

PLACEHOLDER = re.compile(
    r"%(?:\([^()\s]{1,64}\)|\d{1,3}\$)?[-+ #0']*(?:\d{1,4}|\*)?(?:\.(?:\d{1,4}|\*))?(?:hh|h|ll|l|L|q|j|z|t)?"
    r"[diouxXeEfFgGcrsa%]"
    r"|\{[^{}\s]{0,64}\}"
)


def placeholder_run(text: str, budget: Budget) -> TextRun:
    """The text as a run whose placeholders are points (kept whole, in order, out of what is translated)."""
    run, position = TextRun(), 0
    for match in PLACEHOLDER.finditer(text):
        budget.spend()
        run.add(text[position : match.start()])
        run.point(match.group())
        position = match.end()
    run.add(text[position:])
    return run


class PoDocument:
    def __init__(self, data: bytes, limits: DocumentLimits | None = None, retranslate: bool = False):
        budget = Budget(limits or DocumentLimits())
        try:
            self.store = pofile.parsestring(data)
        except (PoParseError, ValueError, LookupError) as exc:  # LookupError: a charset Python does not know
            raise DocumentError(f"not a valid PO file: {exc}") from None
        self.forms = _plural_forms(self.store)
        self.runs: list[TextRun] = []
        self.messages: list[tuple[pounit, list[int | str]]] = []  # each form: its run's index, or kept text
        for unit in self.store.units:
            budget.spend()
            if unit.isheader() or unit.isobsolete() or (_translated(unit) and not retranslate):
                continue
            slots: list[int | str] = []
            for text in _source_forms(unit):
                run = placeholder_run(text, budget)
                if run.translatable:
                    slots.append(len(self.runs))
                    self.runs.append(run)
                else:
                    slots.append(text)
            if any(isinstance(slot, int) for slot in slots):
                self.messages.append((unit, slots))

    def render(self, translated: list[TranslatedRun]) -> bytes:
        runs = iter(zip(translated, self.runs))
        for unit, slots in self.messages:
            escape = _escape_for(unit)
            forms = [
                _with_ends_of(text, with_markup(*next(runs), escape)) if isinstance(slot, int) else slot
                for slot, text in zip(slots, _source_forms(unit))
            ]
            if unit.hasplural():
                singular, plural = forms[0], forms[-1]
                unit.target = multistring([plural] if self.forms == 1 else [singular] + [plural] * (self.forms - 1))
            else:
                unit.target = forms[0]
        try:
            return bytes(self.store)
        except UnicodeEncodeError:  # the translation is not in the file's declared charset: it becomes UTF-8
            self.store.updateheader(Content_Type="text/plain; charset=UTF-8")
            self.store.encoding = "UTF-8"
            return bytes(self.store)


def _escape_for(unit: pounit) -> Callable[[str], str]:
    """What a translation's own text must escape so that only the source's placeholders are directives: `%`
    in a printf-format message, braces in a brace-format one (`msgfmt --check` reads them so)."""
    flags = " ".join(unit.typecomments)
    percent = re.search(r"(?<!no-)\b(c|python|perl|php|sh|object-pascal|awk|gcc-internal|qt)-format", flags)
    brace = re.search(r"(?<!no-)\bpython-brace-format", flags)

    def escape(text: str) -> str:
        if percent:
            text = text.replace("%", "%%")
        if brace:
            text = text.replace("{", "{{").replace("}", "}}")
        return text

    return escape


def _with_ends_of(source: str, text: str) -> str:
    """`text` beginning and ending with the source's own spaces and line breaks (msgfmt requires both or
    neither to begin and to end with one); empty (untranslated) when nothing else is left."""
    core = text.strip()
    if not core:
        return ""
    lead = source[: len(source) - len(source.lstrip())]
    trail = source[len(source.rstrip()) :]
    return lead + core + trail


def _source_forms(unit: pounit) -> list[str]:
    return [str(text) for text in unit.source.strings] if unit.hasplural() else [str(unit.source)]


def _translated(unit: pounit) -> bool:
    """A message with any translation (a fuzzy one too: a translator's draft is theirs to finish)."""
    target = unit.target
    texts = target.strings if isinstance(target, multistring) else [target]
    return any(str(text).strip() for text in texts)


def _plural_forms(store: pofile) -> int:
    """How many plural forms the header's Plural-Forms names (2 where it names none, as in a POT file)."""
    count, _ = store.getheaderplural()
    try:
        return min(max(int(count), 1), 6)
    except (TypeError, ValueError):
        return 2

"""Spans of a sentence that must come out of translation exactly as they went in (docs/api.md, "Fidelity"):
numbers (with their separators, sign, currency and unit), dates and times, URLs, e-mail addresses, code spans,
template variables (`{name}`, `{{ name }}`, `%s`, `%(name)s`, `%1$s`) and inline markup (`<b>`, `</a>`, `<br/>`).

They are carried through the model as a glossary's terms are (shared.text.term_protection): each span is a term
whose target is itself, so it is replaced by a placeholder, or, where a placeholder does not come back, the text
between the spans is translated on its own. ProtectedTerms is a glossary's matcher with the spans added, which
TermProtection takes in place of the glossary. No torch: the API and the document stage check cached answers
with the same rules (shared.text.fidelity).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from shared.text.glossary_matching import Match


class Terms(Protocol):
    """What term protection reads of a glossary (shared.text.glossary.Glossary)."""

    def matches(self, sentence: str) -> list[Match]: ...


VERSION = 1  # of the span rules: part of a worker's cache identity, bump when they change

_UNITS = (
    r"%|‰|°[CF]?|km/h|km|kg|mg|ml|cm|mm|nm|m²|m³|m|g|s|ms|µs|ns|h|min|KiB|MiB|GiB|TiB|KB|MB|GB|TB|kB|GHz|MHz|kHz|Hz"
    r"|px|pt|em|rem|dpi|kW|W|V|mAh|mA|A|L|l"
)
_NUMBER = (
    r"(?:[$€£¥₹₩]\s?)?[-+−]?\d{1,3}(?:[,\u202f\u00a0' ]\d{3})+(?:[.,]\d+)?"  # 1,234,567.89  1 234,5
    r"|(?:[$€£¥₹₩]\s?)?[-+−]?\d+(?:[.,]\d+)*"  # 42  3.14  1.2.3 (versions)
)
_PATTERNS = [
    r"(?:https?|ftp)://[^\s<>\"'`，。、；：！？（）【】]+[^\s<>\"'`，。、；：！？（）【】.,;:!?)\]}]",  # URLs
    r"\bwww\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/[^\s<>\"'`]*[^\s<>\"'`.,;:!?)\]}])?",
    # e-mail addresses, from the start of their local part only (a long run of letters is read once)
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}",
    r"`[^`\n]{1,200}`",  # code spans
    r"\{\{[^{}\n]{1,100}\}\}|\{\{\{[^{}\n]{1,100}\}\}\}",  # {{ mustache }}
    r"\{[A-Za-z0-9_.:\[\]!-]{0,60}\}",  # {placeholder} {0} {name!r}
    r"%(?:\([A-Za-z0-9_]{1,40}\))?(?:\d+\$)?[-+ #0]*\d*(?:\.\d+)?[sdifuxXeEgGcrob%]|%@",  # printf
    r"</?[A-Za-z][A-Za-z0-9-]{0,20}(?:\s[^<>\n]{0,200})?/?>",  # inline markup
    r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",  # ISO dates
    r"\d{1,2}[/.]\d{1,2}[/.]\d{2,4}",  # 02/01/2026  2.1.26
    r"\d{4}年\d{1,2}月\d{1,2}日|\d{1,2}月\d{1,2}日",  # 2026年1月2日
    r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?",  # 10:30  10:30:15 pm
    rf"(?:{_NUMBER})(?:\s?(?:{_UNITS})(?![A-Za-z]))?",  # numbers, with a unit
]
# One alternation, first alternative first: at each place the earliest listed kind wins (a URL's digits stay
# in the URL); a number only where no letter or digit touches it (`mp3`, `H2O`, `COVID-19` are words).
_SPAN = re.compile(
    "|".join(f"(?:{p})" for p in _PATTERNS[:-1])
    + rf"|(?<![A-Za-z0-9_])(?<![A-Za-z]-)(?:{_PATTERNS[-1]})(?![A-Za-z0-9])"
)
_PLACEHOLDER = re.compile(r"__\s*\d{1,9}\s*__")  # term protection's own (shared.text.term_protection)


def find_spans(sentence: str) -> list[tuple[int, int]]:
    """Where the protected spans are, in order, never overlapping: (start, end) of each. A placeholder-like
    `__1__` already in the sentence is not a span (term protection numbers its own above it). Linear in the
    sentence: each alternative is bounded or stops at a character class."""
    taken = [(m.start(), m.end()) for m in _PLACEHOLDER.finditer(sentence)]
    spans = []
    for match in _SPAN.finditer(sentence):
        start, end = match.span()
        text = match.group(0).rstrip()
        end = start + len(text)
        if end > start and not any(s < end and start < e for s, e in taken):
            spans.append((start, end))
    return spans


def spans_of(sentence: str) -> list[str]:
    """The protected spans' texts, in order."""
    return [sentence[start:end] for start, end in find_spans(sentence)]


@dataclass(frozen=True)
class ProtectedTerms:
    """A glossary's terms (None: none) and the sentence's protected spans as one matcher, as TermProtection
    reads a glossary: `matches`, in order, never overlapping (a glossary term wins over a span it overlaps)."""

    glossary: Terms | None = None

    def matches(self, sentence: str) -> list[Match]:
        """Spans with only spaces between them are one match of their exact text (term protection would join
        separate ones with its own spacing: `10:30 pm`, `$5 10%` stay as written)."""
        terms = self.glossary.matches(sentence) if self.glossary is not None else []
        spans: list[Match] = []
        for start, end in find_spans(sentence):
            if any(t.start < end and start < t.end for t in terms):
                continue
            if spans and not sentence[spans[-1].end : start].strip():
                start = spans.pop().start
            spans.append(Match(start, end, sentence[start:end]))
        return sorted([*terms, *spans], key=lambda m: m.start)

    def found_in(self, sentence: str) -> bool:
        return bool(self.matches(sentence))

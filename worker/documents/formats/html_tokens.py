"""HTML tokens with their exact source text, found in one pass (linear in the input, whatever it holds).

The standard library's parser rescans the rest of the input for every construct that is never closed
(`<!--`, `<!`, `<a ` …), which makes a few MiB of them cost minutes. Here each construct's end is looked
for once, and one that is never closed runs to the end of the input as HTML5 reads it (an unclosed
comment or tag swallows the rest, which then is kept as it is, never translated). Quoted attribute
values may hold `>`; `<script>` and `<style>` hold raw text up to their end tag.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from worker.documents.formats.limits import Budget

_OPENER = re.compile(r"<[a-zA-Z!/?]")
_NAME = re.compile(r"[^\t\n\f\r />]*")
# The rest of a tag up to its `>`: possessive, so a tag that is never closed is scanned once.
_TAG_REST = re.compile(r"""(?:[^>"'=]++|=\s*+(?:"[^"]*+"|'[^']*+')|[="'])*+>""")
_ATTR = re.compile(r"""([^\s/>"'=][^\s/>"'=]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?""")
RAW_TEXT = frozenset(("script", "style"))


@dataclass(slots=True)
class Token:
    kind: str  # start, end, startend, data, other (comments, declarations, processing instructions)
    raw: str
    tag: str = ""

    def attrs(self) -> dict[str, str]:
        """A start tag's attributes (names lower-cased, values unescaped; the first of a name wins)."""
        found: dict[str, str] = {}
        rest = self.raw[1 + len(self.tag) : -1]
        for match in _ATTR.finditer(rest):
            name = match.group(1).lower()
            value = next((g for g in match.groups()[1:] if g is not None), "")
            found.setdefault(name, html.unescape(value))
        return found


def tokenize(source: str, budget: Budget) -> list[Token]:
    """Every token of `source`; their raw texts joined give `source` back. Each tag spends one part."""
    tokens: list[Token] = []
    position, size = 0, len(source)
    while position < size:
        opener = _OPENER.search(source, position)
        if opener is None:
            tokens.append(Token("data", source[position:]))
            break
        start = opener.start()
        if start > position:
            tokens.append(Token("data", source[position:start]))
        token = _construct(source, start)
        budget.spend()
        tokens.append(token)
        position = start + len(token.raw)
        if token.kind == "start" and token.tag in RAW_TEXT:
            end = _raw_text_end(source, position, token.tag)
            if end > position:
                tokens.append(Token("data", source[position:end]))
            position = end
    return tokens


def _construct(source: str, start: int) -> Token:
    """The comment, declaration or tag at `start` (a `<` followed by a letter, `!`, `/` or `?`)."""
    second = source[start + 1]
    if second == "!" or second == "?":
        if source.startswith("<!--", start):
            return Token("other", source[start : _after(source, "-->", start + 2)])
        if source.startswith("<![CDATA[", start):
            return Token("other", source[start : _after(source, "]]>", start + 9)])
        return Token("other", source[start : _after(source, ">", start + 2)])
    closing = second == "/"
    name_start = start + 2 if closing else start + 1
    if closing and not source[name_start : name_start + 1].isalpha():
        return Token("other", source[start : _after(source, ">", name_start)])  # `</>`, `</ x>`: bogus
    name_end = _NAME.match(source, name_start).end()  # type: ignore[union-attr]
    rest = _TAG_REST.match(source, name_end)
    end = rest.end() if rest else len(source)  # never closed: the rest of the input is this tag
    raw = source[start:end]
    tag = source[name_start:name_end].lower()
    if not rest:
        return Token("other", raw)
    if closing:
        return Token("end", raw, tag)
    return Token("startend" if raw.endswith("/>") else "start", raw, tag)


def _after(source: str, terminator: str, start: int) -> int:
    """The offset just past the first `terminator` from `start`, or the end of the input."""
    found = source.find(terminator, start)
    return len(source) if found < 0 else found + len(terminator)


_RAW_END = {tag: re.compile(rf"</{tag}(?=[\t\n\f\r />]|\Z)", re.IGNORECASE) for tag in RAW_TEXT}


def _raw_text_end(source: str, start: int, tag: str) -> int:
    found = _RAW_END[tag].search(source, start)
    return found.start() if found else len(source)

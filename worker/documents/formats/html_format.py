"""HTML documents (and the inline tags of subtitles): html_tokens finds the tags, in one pass; every tag,
attribute, comment and script is written back byte for byte, only text changes.

Text between block tags is a run; inline tags (`<b>`, `<a href>`, `<span>`, …) inside it are events, so a
sentence with a link in it is translated as one sentence. `<code>`, `<kbd>` and the like inside a run
are kept whole as a point; `<script>`, `<style>`, `<pre>`, `<textarea>`, and elements marked
`translate="no"` or `class="notranslate"` are not translated at all.
"""

from __future__ import annotations

import html
from typing import Callable

from worker.documents.formats.html_tokens import Token, tokenize
from worker.documents.formats.limits import Budget, DocumentLimits
from worker.documents.formats.placement import TranslatedRun, with_markup
from worker.documents.formats.runs import TextRun

INLINE = frozenset(
    "a abbr b bdi bdo big cite data del dfn em font i ins label mark q rp rt ruby s small span strike "
    "strong sub sup time tt u".split()
)
VOID_INLINE = frozenset("br img wbr input".split())
KEPT_INLINE = frozenset("code kbd samp var math svg".split())  # kept whole inside a run
KEPT_BLOCK = frozenset("script style pre textarea template noscript code kbd samp var math svg".split())
VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())


def _kept(token: Token) -> bool:
    if token.tag in KEPT_BLOCK:
        return True
    if "translate" not in token.raw.lower():  # neither attribute can be there: no need to read them
        return False
    attrs = token.attrs()
    classes = (attrs.get("class") or "").split()
    return token.tag in KEPT_BLOCK or attrs.get("translate") == "no" or "notranslate" in classes


class MarkupDocument:
    """Literal markup and runs, in order: rendering puts each run's translation in its place."""

    def __init__(self, escape_text: bool = True):
        self.parts: list[str | int] = []
        self.runs: list[TextRun] = []
        self.escape_text = escape_text
        self._run = TextRun("")
        self._raw: list[str] = []
        self._open: dict[str, list[int]] = {}  # tag -> its open events, innermost last

    # building
    def literal(self, raw: str) -> None:
        self.flush()
        self.parts.append(raw)

    def text(self, raw: str, text: str) -> None:
        self._raw.append(raw)
        self._run.add(text)

    def inline_open(self, raw: str, tag: str) -> None:
        self._raw.append(raw)
        self._open.setdefault(tag, []).append(self._run.open(raw))

    def inline_close(self, raw: str, tag: str) -> None:
        """Closes the innermost open span of the same tag (in constant time); a stray end tag is a point."""
        self._raw.append(raw)
        opened = self._open.get(tag)
        if opened:
            self._run.close(opened.pop(), raw)
        else:
            self._run.point(raw)

    def inline_point(self, raw: str) -> None:
        self._raw.append(raw)
        self._run.point(raw)

    def flush(self) -> None:
        if self._run.translatable:
            self.parts.append(len(self.runs))
            self.runs.append(self._run)
        elif self._raw:
            self.parts.append("".join(self._raw))
        self._run, self._raw, self._open = TextRun(""), [], {}

    # rendering
    def render(self, translated: list[TranslatedRun], escape: Callable[[str], str] | None = None) -> str:
        """The document with each run's translation in its place; `escape` writes a translation's text (by
        default HTML's escapes, or subtitles' look-alikes)."""
        if escape is None:
            escape = (lambda text: html.escape(text, quote=False)) if self.escape_text else _no_tags
        return "".join(
            part if isinstance(part, str) else with_markup(translated[part], self.runs[part], escape)
            for part in self.parts
        )


def _no_tags(text: str) -> str:
    """Subtitles have no escapes: a translation's angle brackets become look-alikes, never a tag."""
    return text.replace("<", "‹").replace(">", "›")


def parse_markup(
    source: str, all_inline: bool = False, entities: bool = True, budget: Budget | None = None
) -> MarkupDocument:
    """Runs and markup of an HTML text. `all_inline`: every tag is inline (subtitle lines); `entities`:
    `&amp;` and the like stand for characters (HTML), else they are text (subtitles). `budget`: the parts
    the document may have (DocumentTooComplex past it)."""
    document = MarkupDocument(escape_text=entities)
    tokens = tokenize(source, budget or Budget(DocumentLimits()))
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.kind == "start" and _kept(token):
            end = _matching_end(tokens, index)
            raw = "".join(t.raw for t in tokens[index : end + 1])
            if token.tag in KEPT_INLINE and document._run.text.strip():
                document.inline_point(raw)
            else:
                document.literal(raw)
            index = end + 1
            continue
        if token.kind == "data":
            document.text(token.raw, html.unescape(token.raw) if entities and "&" in token.raw else token.raw)
        elif token.kind in ("start", "startend") and (all_inline or token.tag in INLINE | VOID_INLINE):
            if token.kind == "startend" or token.tag in VOID:
                document.inline_point(token.raw)
            else:
                document.inline_open(token.raw, token.tag)
        elif token.kind == "end" and (all_inline or token.tag in INLINE):
            document.inline_close(token.raw, token.tag)
        else:
            document.literal(token.raw)
        index += 1
    document.flush()
    return document


def _matching_end(tokens: list[Token], index: int) -> int:
    """The index of the end tag closing tokens[index] (the last token when it is never closed)."""
    tag, depth = tokens[index].tag, 0
    for position in range(index, len(tokens)):
        token = tokens[position]
        if token.kind == "start" and token.tag == tag:
            depth += 1
        elif token.kind == "end" and token.tag == tag:
            depth -= 1
            if depth == 0:
                return position
    return len(tokens) - 1

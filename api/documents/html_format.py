"""HTML documents (and the inline tags of subtitles): the standard library's HTML parser finds the tags;
every tag, attribute, comment and script is written back byte for byte, only text changes.

Text between block tags is a run; inline tags (`<b>`, `<a href>`, `<span>`, …) inside it are events, so a
sentence with a link in it is translated as one sentence. `<code>`, `<kbd>` and the like inside a run
are kept whole as a point; `<script>`, `<style>`, `<pre>`, `<textarea>`, and elements marked
`translate="no"` or `class="notranslate"` are not translated at all.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from api.documents.runs import TextRun, TranslatedRun, with_markup

INLINE = frozenset(
    "a abbr b bdi bdo big cite data del dfn em font i ins label mark q rp rt ruby s small span strike "
    "strong sub sup time tt u".split()
)
VOID_INLINE = frozenset("br img wbr input".split())
KEPT_INLINE = frozenset("code kbd samp var math svg".split())  # kept whole inside a run
KEPT_BLOCK = frozenset("script style pre textarea template noscript code kbd samp var math svg".split())
VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())


@dataclass
class _Token:
    kind: str  # start, end, startend, data, ref, other
    raw: str
    tag: str = ""
    attrs: list[tuple[str, str | None]] = field(default_factory=list)


class _Tokenizer(HTMLParser):
    """Tokens with their exact source text (each token's text runs to where the next one starts)."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=False)
        self.source = source
        self.line_starts = [0] + [newline.end() for newline in re.finditer("\n", source)]
        self.marks: list[tuple[int, str, str, list[tuple[str, str | None]]]] = []

    def _mark(self, kind: str, tag: str = "", attrs: list[tuple[str, str | None]] | None = None) -> None:
        line, column = self.getpos()
        self.marks.append((self.line_starts[line - 1] + column, kind, tag, attrs or []))

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self._mark("start", tag, attrs)

    def handle_startendtag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self._mark("startend", tag, attrs)

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        self._mark("end", tag)

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        self._mark("data")

    def handle_entityref(self, name):  # type: ignore[no-untyped-def]
        self._mark("ref")

    def handle_charref(self, name):  # type: ignore[no-untyped-def]
        self._mark("ref")

    def handle_comment(self, data):  # type: ignore[no-untyped-def]
        self._mark("other")

    def handle_decl(self, decl):  # type: ignore[no-untyped-def]
        self._mark("other")

    def handle_pi(self, data):  # type: ignore[no-untyped-def]
        self._mark("other")

    def unknown_decl(self, data):  # type: ignore[no-untyped-def]
        self._mark("other")

    def tokens(self) -> list[_Token]:
        self.feed(self.source)
        self.close()
        ends = [mark[0] for mark in self.marks[1:]] + [len(self.source)]
        out = [
            _Token(kind, self.source[start:end], tag, attrs) for (start, kind, tag, attrs), end in zip(self.marks, ends)
        ]
        covered = self.marks[0][0] if self.marks else len(self.source)
        if covered:  # text before the first token the parser reported
            out.insert(0, _Token("data", self.source[:covered]))
        return out


def tokenize(source: str) -> list[_Token]:
    return _Tokenizer(source).tokens()


def _kept(token: _Token) -> bool:
    attrs = dict(token.attrs)
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
        self._open: list[tuple[str, int]] = []

    # building
    def literal(self, raw: str) -> None:
        self.flush()
        self.parts.append(raw)

    def text(self, raw: str, text: str) -> None:
        self._raw.append(raw)
        self._run.text += text

    def inline_open(self, raw: str, tag: str) -> None:
        self._raw.append(raw)
        self._open.append((tag, self._run.open(raw)))

    def inline_close(self, raw: str, tag: str) -> None:
        self._raw.append(raw)
        for depth in range(len(self._open) - 1, -1, -1):
            if self._open[depth][0] == tag:
                _, opened = self._open.pop(depth)
                self._run.close(opened, raw)
                return
        self._run.point(raw)  # a stray end tag

    def inline_point(self, raw: str) -> None:
        self._raw.append(raw)
        self._run.point(raw)

    def flush(self) -> None:
        if self._run.translatable:
            self.parts.append(len(self.runs))
            self.runs.append(self._run)
        elif self._raw:
            self.parts.append("".join(self._raw))
        self._run, self._raw, self._open = TextRun(""), [], []

    # rendering
    def render(self, translated: list[TranslatedRun]) -> str:
        escape = (lambda text: html.escape(text, quote=False)) if self.escape_text else _no_tags
        return "".join(
            part if isinstance(part, str) else with_markup(translated[part], self.runs[part], escape)
            for part in self.parts
        )


def _no_tags(text: str) -> str:
    """Subtitles have no escapes: a translation's angle brackets become look-alikes, never a tag."""
    return text.replace("<", "‹").replace(">", "›")


def parse_markup(source: str, all_inline: bool = False, entities: bool = True) -> MarkupDocument:
    """Runs and markup of an HTML text. `all_inline`: every tag is inline (subtitle lines); `entities`:
    `&amp;` and the like stand for characters (HTML), else they are text (subtitles)."""
    document = MarkupDocument(escape_text=entities)
    tokens = tokenize(source)
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
            document.text(token.raw, token.raw)
        elif token.kind == "ref":
            document.text(token.raw, html.unescape(token.raw) if entities else token.raw)
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


def _matching_end(tokens: list[_Token], index: int) -> int:
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

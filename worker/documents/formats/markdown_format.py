"""Markdown documents: markdown-it-py (CommonMark, with tables and strikethrough) finds the blocks and
their inline content; only the inline content of paragraphs, headings and table cells is replaced.
Code blocks, fences, HTML blocks, front matter and every line prefix (`#`, `>`, list markers, table
pipes) stay as they were.

Inline markup comes back rebuilt from the parse: emphasis as `*`/`**`, strikethrough as `~~`, links and
images with their destination and title, inline code and inline HTML byte for byte. A paragraph's soft
line breaks become spaces (its sentences are translated whole), so it comes back on one line.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from worker.documents.formats.limits import Budget, DocumentLimits
from worker.documents.formats.placement import TranslatedRun, with_markup
from worker.documents.formats.runs import OPEN, POINT, TextRun

_PARSER = MarkdownIt("commonmark").enable("table").enable("strikethrough")
_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~])")
_PLAIN = ("text", "softbreak")
_MARKERS = {"em": "*", "strong": "**", "s": "~~"}
_KEPT_OPEN = re.compile(r"<(code|kbd|samp|var)\b[^>]*>", re.IGNORECASE)


def escape(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text)


# What would start another block at the start of a line (the run's first, or one after a hard break):
# a heading, quote, list item, setext underline or ordered list item. Its marker is escaped and the
# line's leading blanks (an indented code block) dropped.
_LINE_START_BLANKS = re.compile(r"(\A|\n)[ \t]+")
_BLOCK_START = re.compile(r"(\A|\n)(?:([#>+=-])|(\d{1,9})([.)]))")


def _escape_block_start(match: re.Match[str]) -> str:
    if match.group(2):
        return f"{match.group(1)}\\{match.group(2)}"
    return f"{match.group(1)}{match.group(3)}\\{match.group(4)}"


class MarkdownDocument:
    def __init__(self, source: str, budget: Budget | None = None):
        self.source = source
        self.regions: list[tuple[int, int]] = []  # source span of each run's inline content
        self.runs: list[TextRun] = []
        budget = budget or Budget(DocumentLimits())
        budget.spend(source.count("\n") + source.count("|"))  # lines and table cells, before they are parsed
        line_starts = [0]
        for line in source.splitlines(keepends=True):
            line_starts.append(line_starts[-1] + len(line))
        lines = source.splitlines()
        cursors: dict[int, int] = {}
        for token in _PARSER.parse(source):
            if token.type != "inline" or not token.map or not token.children:
                continue
            budget.spend(sum(child.type not in _PLAIN for child in token.children))  # its inline markup
            span = _locate(token, lines, line_starts, cursors)
            run = _run_of(token.children)
            if span and run.translatable:
                self.regions.append(span)
                self.runs.append(run)

    def render(self, translated: list[TranslatedRun]) -> str:
        out, position = [], 0
        for (start, end), run, translation in zip(self.regions, self.runs, translated):
            out.append(self.source[position:start])
            widen_empty_spans(translation, run)
            rendered = with_markup(keep_spaces_around_points(translation, run), run, escape)
            rendered = _LINE_START_BLANKS.sub(r"\1", rendered)
            out.append(_BLOCK_START.sub(_escape_block_start, rendered))
            position = end
        out.append(self.source[position:])
        return "".join(out)


def _locate(token: Token, lines: list[str], line_starts: list[int], cursors: dict[int, int]) -> tuple[int, int] | None:
    """Where the inline token's content lies in the source; None when a line of it is not found as is."""
    first = token.map[0] if token.map else 0
    start = end = -1
    for number, content_line in enumerate(token.content.split("\n")):
        index = first + number
        if index >= len(lines):
            return None
        at = lines[index].find(content_line, cursors.get(index, 0))
        if at < 0:
            return None
        cursors[index] = at + len(content_line)
        if number == 0:
            start = line_starts[index] + at
        end = line_starts[index] + at + len(content_line)
    return (start, end) if start >= 0 else None


def _destination(href: str, title: str | None) -> str:
    target = f"<{href}>" if re.search(r"[\s()<>]", href) else href
    if title:
        target += ' "' + title.replace('"', '\\"') + '"'
    return target


def _run_of(children: list[Token]) -> TextRun:
    run = TextRun("")
    opened: list[tuple[int, str]] = []  # open event, and the markup that will close it
    autolink: list[str] | None = None  # the text of an autolink being read
    kept: list[str] | None = None  # the source of an inline <code>/<kbd> element being read (not translated)
    kept_tag = ""
    for child in children:
        kind = child.type
        if autolink is not None:
            if kind == "link_close":
                run.point(f"<{''.join(autolink)}>")
                autolink = None
            else:
                autolink.append(child.content)
        elif kept is not None:
            kept.append(child.markup + child.content + child.markup if kind == "code_inline" else child.content)
            if kind == "html_inline" and re.match(rf"</{kept_tag}\s*>", child.content, re.IGNORECASE):
                run.point("".join(kept))
                kept = None
        elif kind in ("text", "text_special"):
            run.add(child.content)
        elif kind == "softbreak":
            run.add(" ")
        elif kind == "hardbreak":
            run.point("\\")
            run.add("\n")
        elif kind == "code_inline":
            fence = child.markup
            pad = " " if child.content[:1] == "`" or child.content[-1:] == "`" else ""
            run.point(f"{fence}{pad}{child.content}{pad}{fence}")
        elif kind == "html_inline" and _KEPT_OPEN.match(child.content):
            kept, kept_tag = [child.content], _KEPT_OPEN.match(child.content).group(1)  # type: ignore[union-attr]
        elif kind == "html_inline":
            run.point(child.content)

        elif kind == "image":
            run.point(f"![{child.content}]({_destination(_attr(child, 'src'), _attr(child, 'title'))})")
        elif kind == "link_open" and child.markup == "autolink":
            autolink = []
        elif kind == "link_open":
            opened.append((run.open("["), f"]({_destination(_attr(child, 'href'), _attr(child, 'title'))})"))
        elif kind.endswith("_open") and kind[:-5] in _MARKERS:
            opened.append((run.open(_MARKERS[kind[:-5]]), _MARKERS[kind[:-5]]))
        elif (kind == "link_close" or kind.endswith("_close") and kind[:-6] in _MARKERS) and opened:
            event, markup = opened.pop()
            run.close(event, markup)
    return run


def _attr(token: Token, name: str) -> str:
    return str(token.attrs.get(name) or "")


def keep_spaces_around_points(translated: TranslatedRun, run: TextRun) -> TranslatedRun:
    """Inline code, HTML and images that stood between spaces in the source stand between spaces in the
    translation too (a translation that closed the gap would glue them to a word)."""
    text, source = translated.text, run.text
    pieces: list[str] = []
    offsets: list[int] = []
    shift = position = 0
    last = " "  # the last character written so far (the run's start counts as a space)
    for event, at in zip(run.events, translated.offsets):
        if at > position:
            pieces.append(text[position:at])
            last, position = text[at - 1], at
        spaced_before = source[event.offset - 1 : event.offset].isspace()
        if event.kind == POINT and spaced_before and at and not last.isspace():
            pieces.append(" ")
            last, shift = " ", shift + 1
        offsets.append(at + shift)
        spaced_after = source[event.offset : event.offset + 1].isspace()
        if event.kind == POINT and spaced_after and at < len(text) and not text[at].isspace():
            pieces.append(" ")
            last, shift = " ", shift + 1
    pieces.append(text[position:])
    return TranslatedRun("".join(pieces), offsets, translated.fills)


def widen_empty_spans(translated: TranslatedRun, run: TextRun) -> None:
    """Markdown drops an empty emphasis: give a span that came out empty (and has no text of its own to
    fill it) the next word."""
    text, offsets = translated.text, translated.offsets
    for index, event in enumerate(run.events):
        if event.kind != OPEN or event.pair < 0 or offsets[event.pair] > offsets[index] or index in translated.fills:
            continue
        end = offsets[index]
        while end < len(text) and text[end].isspace():
            end += 1
        while end < len(text) and not text[end].isspace():
            end += 1
        for later in range(event.pair, len(offsets)):
            offsets[later] = max(offsets[later], end)

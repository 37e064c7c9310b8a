"""Translation memory files, read and written by the API (POST /v1/memories, GET /v1/memories/<id>): TMX 1.4
(and 1.1's `lang`, OmegaT's and Okapi's dialects), TSV and CSV pairs. TMX is XML from a client: it is parsed
incrementally (each <tu> dropped once read; every few thousand events a gevent API process serves other
requests) with defusedxml, which refuses entity declarations (a billion laughs) and external entities, and never fetches
a DTD (OmegaT names one in its DOCTYPE), within TRANSQ_MEMORY_MAX_BYTES and TRANSQ_MEMORY_MAX_ENTRIES."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Iterable, Iterator
from xml.sax.saxutils import escape, quoteattr

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from shared.cooperation import let_others_run
from shared.errors import PayloadTooLarge, ValidationError
from shared.store.sentence_cache import normalise

FORMATS = ("tmx", "tsv", "csv")
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
# Inline elements whose content is the original's markup (a tag, a placeholder), not text to translate;
# <hi> and <sub> hold text.
_CODES = {"bpt", "ept", "ph", "it", "ut"}
_NOT_XML = re.compile("[\x00-\x08\x0e-\x1f\ufffe\uffff\ud800-\udfff]")  # what XML 1.0 text cannot hold
_YIELD_EVERY = 5000  # parse events, or entries, between two chances for other requests to run


@dataclass(frozen=True)
class MemoryFile:
    """What an import reads: its entries (source, target; normalised, a repeated source's last target wins) and
    how many units it left out (another pair's, or missing a side)."""

    entries: dict[str, str]
    skipped: int


def format_of(named: str | None, filename: str | None) -> str:
    """The file's format: the `format` field, else its name's extension."""
    if named:
        if named.lower() not in FORMATS:
            raise ValidationError(f"format must be one of {', '.join(FORMATS)}")
        return named.lower()
    extension = (filename or "").rsplit(".", 1)[-1].lower() if filename and "." in filename else ""
    if extension not in FORMATS:
        raise ValidationError(
            f"name the file's format: `format` one of {', '.join(FORMATS)} (or a .tmx/.tsv/.csv name)"
        )
    return extension


def read_memory_file(data: bytes, fmt: str, source: str, target: str, max_entries: int, max_chars: int) -> MemoryFile:
    """The entries of a memory file for the pair source-target: 422 for a malformed file, a file with no unit of
    the pair, or a segment over `max_chars`; 413 with more than `max_entries` units."""
    pairs = _tmx_pairs(data, source, target) if fmt == "tmx" else _table_pairs(data, fmt, source, target)
    entries: dict[str, str] = {}
    skipped = 0
    for number, pair in enumerate(pairs, 1):
        if number % _YIELD_EVERY == 0:
            let_others_run()
        if number > max_entries:
            raise PayloadTooLarge(
                f"the file holds more than {max_entries} entries (TRANSQ_MEMORY_MAX_ENTRIES); split it into several memories"
            )
        if pair is None:
            skipped += 1
            continue
        src, tgt = normalise(pair[0]), normalise(pair[1])
        if not src or not tgt:
            skipped += 1
            continue
        if not xml_safe(src) or not xml_safe(tgt):  # (its export, TMX, could not hold them)
            raise ValidationError(f"entry {number} holds a control character, which a memory cannot keep")
        if len(src) > max_chars or len(tgt) > max_chars:
            raise ValidationError(
                f"entry {number} has a segment of {max(len(src), len(tgt))} characters; at most {max_chars} are "
                "allowed (TRANSQ_MEMORY_MAX_ENTRY_CHARS)"
            )
        entries[src] = tgt
    if not entries:
        raise ValidationError(
            f"the file holds no entry of the pair {source}-{target} ({skipped} units of other pairs or empty)"
        )
    return MemoryFile(entries, skipped)


def xml_safe(text: str) -> bool:
    """Whether XML 1.0 text (the export, TMX) can hold `text`: no control character but tab and line breaks."""
    return not _NOT_XML.search(text)


def _language(tag: str | None) -> str:
    """A TMX language code's primary subtag, lower case (`ZH-CN`, `zh_Hans`, `EN-US` -> zh, zh, en)."""
    return (tag or "").replace("_", "-").split("-", 1)[0].lower()


def _tmx_pairs(data: bytes, source: str, target: str) -> Iterator[tuple[str, str] | None]:
    """Each <tu>'s pair as the parse reaches its end (then it is dropped: the tree never holds the whole file)."""
    events = iterparse(
        io.BytesIO(data), events=("start", "end"), forbid_dtd=False, forbid_entities=True, forbid_external=True
    )
    try:
        for count, (event, element) in enumerate(events):
            if count == 0 and element.tag != "tmx":
                raise ValidationError("the file is not TMX: its root must be <tmx>")
            if count % _YIELD_EVERY == 0:
                let_others_run()
            if event == "end" and element.tag == "tu":
                yield _pair(element, source, target)
                element.clear()
    except DefusedXmlException as exc:
        raise ValidationError(
            f"the TMX file declares entities or names external ones, which are refused: {exc!r}"
        ) from None
    except ET.ParseError as exc:
        raise ValidationError(f"the TMX file is not well-formed XML: {exc}") from None


def _pair(tu: ET.Element, source: str, target: str) -> tuple[str, str] | None:
    sides: dict[str, str] = {}
    for tuv in tu.findall("tuv"):
        lang = _language(tuv.get(_XML_LANG) or tuv.get("lang"))  # TMX 1.4 xml:lang; 1.1 (old OmegaT) lang
        seg = tuv.find("seg")
        if seg is not None and lang not in sides:
            sides[lang] = _seg_text(seg)
    return (sides[source], sides[target]) if source in sides and target in sides else None


def _seg_text(seg: ET.Element) -> str:
    """A <seg>'s text: its own and <hi>/<sub> text, without the native codes of <bpt>, <ept>, <ph>, <it>, <ut>.
    Walked with a stack, not recursion: a client's file may nest <hi> thousands deep (Python's recursion limit)."""
    parts: list[str] = []
    stack: list[ET.Element | str] = [seg]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        if item is not seg and item.tag in _CODES:
            continue
        parts.append(item.text or "")
        for child in reversed(item):
            stack += [child.tail or "", child]
    return "".join(parts)


def _table_pairs(data: bytes, fmt: str, source: str, target: str) -> Iterator[tuple[str, str] | None]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(f"the {fmt.upper()} file is not UTF-8 (byte {exc.start})") from None
    rows = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if fmt == "tsv" else ",")
    try:
        for number, row in enumerate(rows):
            cells = [cell.strip().lower() for cell in row]
            if number == 0 and cells[:2] in ([source, target], ["source", "target"]):
                continue  # a header row
            if not row:
                continue
            if len(row) < 2:
                raise ValidationError(
                    f"row {number + 1} of the {fmt.upper()} file has {len(row)} column; two are needed (source, target)"
                )
            yield row[0], row[1]
    except csv.Error as exc:
        raise ValidationError(f"the {fmt.upper()} file cannot be read: {exc}") from None


def write_tmx(entries: Iterable[tuple[str, str]], source: str, target: str, name: str) -> Iterator[str]:
    """A memory as TMX 1.4 (one <tu> per entry, the languages as xml:lang), as OmegaT and Okapi read it: in
    pieces, as `entries` come (a response streams them)."""
    yield "\n".join(
        [
            '<?xml version="1.0" encoding="UTF-8"?>',
            '<tmx version="1.4">',
            f'  <header creationtool="transq" creationtoolversion="1" segtype="sentence" o-tmf="transq" '
            f'adminlang="en" srclang={quoteattr(source)} datatype="plaintext">',
            f'    <prop type="name">{escape(name)}</prop>',
            "  </header>",
            "  <body>\n",
        ]
    )
    for src, tgt in entries:
        yield (
            f"    <tu>\n      <tuv xml:lang={quoteattr(source)}><seg>{escape(src)}</seg></tuv>\n"
            f"      <tuv xml:lang={quoteattr(target)}><seg>{escape(tgt)}</seg></tuv>\n    </tu>\n"
        )
    yield "  </body>\n</tmx>\n"

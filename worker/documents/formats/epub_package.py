"""An EPUB book's container read and checked before anything is translated: which of its entries are
translated (every XHTML content document of the spine, or a foreign one's XHTML fallback, the EPUB 3
navigation document, the EPUB 2 NCX table of contents, the package documents' titles) and that everything
else can be copied byte for byte. Names are compared in Unicode's composed form (NFC), as OCF does.

Refused (422 `invalid_document`, naming the entry): entry names that are absolute, hold `..` or a backslash
or come twice; a book encrypted for DRM (META-INF/encryption.xml encrypting anything with another method
than the fonts' obfuscation, or a zip entry encrypted); no META-INF/container.xml or no package document;
a manifest href leading out of the container; a spine item that is neither XHTML nor SVG and has no XHTML
fallback, or is missing; XML that is not well-formed, not UTF-8 or UTF-16, or declares entities
(`<!ENTITY`: how an entity bomb grows and how an external entity reads a file; none is ever resolved or
fetched). The elements of every XML part read, and the zip's entries, are counted (streaming) against
TRANSQ_MAX_DOCUMENT_PARTS (422 `document_too_complex`)."""

from __future__ import annotations

import io
import posixpath
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from lxml import etree

from shared.document_formats import DocumentError, decode_text
from worker.documents.formats.limits import Budget

CONTAINER = "META-INF/container.xml"
ENCRYPTION = "META-INF/encryption.xml"
_OCF = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
_PACKAGE_TYPE = "application/oebps-package+xml"
XHTML_TYPE = "application/xhtml+xml"
_NCX_TYPE = "application/x-dtbncx+xml"
_FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
_CHUNK = 1 << 20


@dataclass
class Package:
    """The entries translated, each once, in reading order (dicts as ordered sets)."""

    documents: dict[str, None] = field(default_factory=dict)  # XHTML: the spine's, then the navigation document
    packages: dict[str, None] = field(default_factory=dict)  # the package documents (their dc:title)
    tables: dict[str, None] = field(default_factory=dict)  # the NCX tables of contents


def read_package(archive: zipfile.ZipFile, budget: Budget) -> tuple[Package, dict[str, str]]:
    """The book's package and the text of every XML entry it translates, by entry name."""
    _check_entries(archive, budget)
    names = {unicodedata.normalize("NFC", name): name for name in archive.NameToInfo}
    texts: dict[str, str] = {}

    def tree(name: str) -> etree._Element:
        texts[name] = read_xml(archive, name, budget)
        return etree.fromstring(archive.read(name), _PARSER)  # its elements already counted: bounded

    if ENCRYPTION in archive.NameToInfo:
        _check_encryption(tree(ENCRYPTION))
    package = Package()
    rootfiles = [
        rootfile.get("full-path") or ""
        for rootfile in tree(CONTAINER).iter(f"{_OCF}rootfile")
        if rootfile.get("media-type") == _PACKAGE_TYPE
    ]
    if not rootfiles:
        raise DocumentError(f"not a valid .epub file: {CONTAINER} names no package document ({_PACKAGE_TYPE})")
    for path in rootfiles:
        name = held(names, resolve("", path, CONTAINER), CONTAINER)
        if name not in package.packages:
            package.packages[name] = None
            _read_opf(names, name, tree(name), package)
    for name in [*package.documents, *package.tables]:
        texts[name] = read_xml(archive, name, budget)
    texts.pop(CONTAINER)
    texts.pop(ENCRYPTION, None)
    return package, texts


def _read_opf(names: dict[str, str], name: str, opf: etree._Element, package: Package) -> None:
    base = posixpath.dirname(name)
    items: dict[str, tuple[str, str, list[str], str]] = {}  # id -> entry, media type, properties, fallback
    for item in opf.iter(f"{_OPF}item"):
        href = item.get("href") or ""
        if urlsplit(href).scheme:  # a remote resource (EPUB 3 audio, video): not in the book
            continue
        where = resolve(base, href, name)
        properties = (item.get("properties") or "").split()
        items[(item.get("id") or "").strip()] = (
            where,
            item.get("media-type") or "",
            properties,
            item.get("fallback") or "",
        )
    found: list[str] = []
    spine = opf.find(f"{_OPF}spine")
    for itemref in spine.iter(f"{_OPF}itemref") if spine is not None else ():
        chapter = _xhtml_of(items, (itemref.get("idref") or "").strip(), name)
        if chapter:
            found.append(chapter)
    found += [where for where, _, properties, _ in items.values() if "nav" in properties]
    toc = items.get((spine.get("toc") or "").strip()) if spine is not None else None
    tables = [toc[0]] if toc else [where for where, media_type, _, _ in items.values() if media_type == _NCX_TYPE]
    for where in found:
        package.documents.setdefault(held(names, where, name))
    for where in tables:
        where = held(names, where, name)
        if where not in package.documents:
            package.tables.setdefault(where)


def _xhtml_of(items: dict[str, tuple[str, str, list[str], str]], idref: str, named_in: str) -> str | None:
    """The XHTML entry a spine item is read as: itself, or the first XHTML item of its fallback chain (EPUB 3:
    a foreign chapter names one); None for an SVG chapter (kept as it is)."""
    if idref not in items:
        raise DocumentError(f"not a valid .epub file: the spine of {named_in} names {idref!r}, not in its manifest")
    seen, current = set(), idref
    while current in items and current not in seen:
        seen.add(current)
        where, media_type, _, fallback = items[current]
        if media_type == XHTML_TYPE:
            return where
        if media_type == "image/svg+xml":
            return None
        current = fallback.strip()
    where, media_type, _, _ = items[idref]
    raise DocumentError(
        f"not a valid .epub file: the chapter {where} is {media_type or 'of no media type'}, not XHTML, "
        "and has no XHTML fallback"
    )


def resolve(base: str, href: str, named_in: str) -> str:
    """The entry an href relative to `base` names (its fragment and query dropped, %-escapes decoded)."""
    path = unquote(urlsplit(href).path)
    joined = posixpath.normpath(posixpath.join(base, path)) if path else ""
    if not path or path.startswith("/") or joined == ".." or joined.startswith("../"):
        raise DocumentError(f"not a valid .epub file: {named_in} names {href!r}, outside the book")
    return joined


def held(names: dict[str, str], where: str, named_in: str) -> str:
    """The book's entry named `where` (compared in Unicode's composed form, NFC, as OCF compares names)."""
    found = names.get(unicodedata.normalize("NFC", where))
    if found is None:
        raise DocumentError(f"not a valid .epub file: {named_in} names {where}, which the book does not hold")
    return found


def read_xml(archive: zipfile.ZipFile, name: str, budget: Budget) -> str:
    """The entry's text, checked: UTF-8 or UTF-16, no entity declaration, well-formed (each element spends a
    part; streaming, so memory stays flat whatever the entry holds)."""
    raw = archive.read(name)
    try:
        text = decode_text(raw)
    except DocumentError as exc:
        raise DocumentError(f"not a valid .epub file: {name}: {exc}") from None
    if "<!ENTITY" in text:
        raise DocumentError(f"not a valid .epub file: {name} declares XML entities (refused: nothing is expanded)")
    try:
        for _, element in etree.iterparse(io.BytesIO(raw), events=("end",), resolve_entities=False, no_network=True):
            budget.spend()
            element.clear()
            while element.getprevious() is not None:
                del element.getparent()[0]
    except etree.XMLSyntaxError as exc:
        raise DocumentError(f"not a valid .epub file: {name} is not well-formed XML ({exc})") from None
    return text


def _check_entries(archive: zipfile.ZipFile, budget: Budget) -> None:
    """Names that stay inside the book, each once; every entry readable (unencrypted, a known compression,
    its declared size and checksum right), read in chunks and dropped. Each entry spends a part."""
    seen: set[str] = set()
    for info in archive.infolist():
        budget.spend()
        name = info.filename
        parts = name.split("/")
        if name.startswith("/") or "\\" in name or ".." in parts or "\x00" in name or name[1:2] == ":":
            raise DocumentError(f"not a valid .epub file: the entry name {name!r} leads out of the book")
        if name in seen:
            raise DocumentError(f"not a valid .epub file: the entry {name!r} is in the zip twice")
        seen.add(name)
        if info.flag_bits & 0x1:
            raise DocumentError(f"the book is encrypted (DRM): its entry {name} is; transq translates open books only")
        try:
            with archive.open(info) as stream:
                while stream.read(_CHUNK):
                    pass
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
            raise DocumentError(f"not a valid .epub file: its entry {name} cannot be read ({exc})") from None


def _check_encryption(root: etree._Element) -> None:
    for data in root.iter(f"{_ENC}EncryptedData"):
        method = data.find(f"{_ENC}EncryptionMethod")
        algorithm = method.get("Algorithm") if method is not None else None
        if algorithm not in _FONT_OBFUSCATION:
            reference = data.find(f".//{_ENC}CipherReference")
            what = reference.get("URI") if reference is not None else "an entry"
            raise DocumentError(
                f"the book is encrypted (DRM: {ENCRYPTION} encrypts {what} with {algorithm}); "
                "transq translates open books only"
            )

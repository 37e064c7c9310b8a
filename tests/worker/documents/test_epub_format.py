"""EPUB books through prepare/render: every chapter, the navigation document, the NCX labels and the title
translated, and nothing else (every other entry byte for byte, in its order and compression; authors,
identifiers, page numbers, code, SVG, comments and `notranslate` text as they were); the output opens
with ebooklib, its spine and table of contents intact; hostile and broken books refused, naming why."""

import io
import re
import warnings
import zipfile
from collections import Counter

import pytest
from lxml import etree

from shared.document_formats import DocumentError, DocumentTooComplex
from tests.api.documents.epub_sample import CHAPTER_1, ENTRIES, OPF, TRANSLATED, XHTML11, epub_bytes
from worker.documents.formats import DocumentLimits, prepare

_PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True)
BLOCKS = ("title", "h1", "p", "td", "li", "text")  # local names of the elements whose text is one run
KEPT = ("pre", "code", "svg", "docAuthor", "pageList", "creator", "identifier", "language", "meta")
MARK = "⟨t⟩"


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _kept(element: etree._Element) -> bool:
    return any(_local(e) in KEPT or "notranslate" in (e.get("class") or "") for e in element.iterancestors()) or (
        _local(element) in KEPT or "notranslate" in (element.get("class") or "")
    )


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as book:
        return {name: book.read(name) for name in book.namelist()}


def shape_of(data: bytes) -> dict[str, list]:
    """Each translated entry's elements, attributes, comments and processing instructions, without text."""
    shapes = {}
    for name, raw in entries(data).items():
        if name in TRANSLATED:
            root = etree.fromstring(raw, _PARSER)
            shapes[name] = [
                (node.tag, dict(node.attrib)) if isinstance(node.tag, str) else (str(node.tag), node.text)
                for node in root.iter(tag=("*", etree.Comment, etree.ProcessingInstruction))
            ]  # (an entity reference such as `&nbsp;` comes back as its character)
    return shapes


def texts_of(data: bytes) -> tuple[dict[tuple[str, int], str], dict[tuple[str, int], str]]:
    """(each block's text, each kept element's text), keyed by entry and the element's position."""
    blocks, kept = {}, {}
    for name, raw in entries(data).items():
        if name not in TRANSLATED:
            continue
        for index, element in enumerate(etree.fromstring(raw, _PARSER).iter("*")):
            text = "".join(element.itertext()).replace("&nbsp;", "\xa0")  # (lxml gives an entity as written)
            if _kept(element):
                kept[(name, index)] = text
            elif _local(element) in BLOCKS and any(ch.isalnum() for ch in text):
                if not any(_local(a) in BLOCKS for a in element.iterancestors()):
                    blocks[(name, index)] = text
    return blocks, kept


def _letters(text: str) -> Counter:
    return Counter(text.replace(MARK, "").replace(" ", "").replace("\xa0", ""))


def test_a_changing_model_changes_every_text_and_nothing_else():
    source = epub_bytes()
    prepared = prepare("epub", source, 300)
    output = prepared.render([unit + MARK for unit in prepared.units])
    assert shape_of(output) == shape_of(source)
    before, after = entries(source), entries(output)
    assert list(after) == list(before)
    for name in before:
        assert name in TRANSLATED or after[name] == before[name], name
    with zipfile.ZipFile(io.BytesIO(source)) as a, zipfile.ZipFile(io.BytesIO(output)) as b:
        assert [i.compress_type for i in a.infolist()] == [i.compress_type for i in b.infolist()]
        assert b.infolist()[0].filename == "mimetype" and b.infolist()[0].compress_type == zipfile.ZIP_STORED
    (blocks, kept), (new_blocks, new_kept) = texts_of(source), texts_of(output)
    assert new_kept == kept and kept  # authors, page numbers, code, SVG, notranslate: as they were
    assert new_blocks.keys() == blocks.keys() and len(blocks) >= 15
    for key, text in blocks.items():  # every text changed, and holds its own words (inline markup moved in it)
        assert MARK in new_blocks[key] and _letters(new_blocks[key]) == _letters(text), (key, new_blocks[key])
    opf = after["OEBPS/content.opf"].decode()
    assert '<dc:title id="title">内存优化实践⟨t⟩</dc:title>' in opf and "<dc:language>zh</dc:language>" in opf
    assert opf.replace(MARK, "") == OPF  # the package document: its title only, byte for byte around it


def test_the_copy_models_translation_keeps_every_text():
    source = epub_bytes()
    prepared = prepare("epub", source, 300)
    output = prepared.render(list(prepared.units))
    assert shape_of(output) == shape_of(source)
    (blocks, kept), (new_blocks, new_kept) = texts_of(source), texts_of(output)
    assert new_kept == kept
    assert {k: v.replace(" ", "") for k, v in new_blocks.items()} == {k: v.replace(" ", "") for k, v in blocks.items()}
    chapter = entries(output)["OEBPS/text/ch1.xhtml"].decode()
    assert chapter.startswith(CHAPTER_1[: CHAPTER_1.index("<body>")])  # declaration, DTD, head: byte for byte


def test_the_output_opens_with_ebooklib_its_spine_and_toc_intact(tmp_path):
    from ebooklib import epub

    source = epub_bytes()
    prepared = prepare("epub", source, 300)
    path = tmp_path / "out.epub"
    path.write_bytes(prepared.render([f"T{n}" for n in range(len(prepared.units))]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        book = epub.read_epub(str(path))
    assert [idref for idref, _ in book.spine] == ["ch1", "ch2"]
    assert [(link.href, re.fullmatch(r"T\d+", link.title) is not None) for link in book.toc] == [
        ("text/ch1.xhtml", True),
        ("text/chapter%202.xhtml", True),
    ]
    assert re.fullmatch(r"T\d+", book.get_metadata("DC", "title")[0][0])
    assert book.get_metadata("DC", "language")[0][0] == "zh"  # kept, as every format keeps its language fields
    assert book.get_item_with_id("cover").get_content() == ENTRIES["OEBPS/images/cover.png"]


def test_a_utf16_chapter_stays_utf16():
    chapter = CHAPTER_1.replace('encoding="utf-8"', 'encoding="UTF-16"')
    source = epub_bytes({"OEBPS/text/ch1.xhtml": b"\xff\xfe" + chapter.encode("utf-16-le")})
    prepared = prepare("epub", source, 300)
    output = entries(prepared.render(list(prepared.units)))["OEBPS/text/ch1.xhtml"]
    assert output.startswith(b"\xff\xfe") and "防止容器耗尽主机资源。" in output.decode("utf-16")
    etree.fromstring(output, _PARSER)


def encryption_xml(algorithm: str) -> bytes:
    return (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
        f'<enc:EncryptionMethod Algorithm="{algorithm}"/><enc:CipherData>'
        '<enc:CipherReference URI="OEBPS/text/ch1.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>'
    ).encode()


def test_obfuscated_fonts_are_not_drm():
    prepare("epub", epub_bytes({"META-INF/encryption.xml": encryption_xml("http://www.idpf.org/2008/embedding")}), 300)


def epub_bomb(size: int = 100_000_000) -> bytes:
    """A chapter of `size` bytes that deflates to a few hundred KiB."""
    body = "<p>字</p>" * (size // 10)
    chapter = f'<html xmlns="http://www.w3.org/1999/xhtml"><body>{body}</body></html>'
    return epub_bytes({"OEBPS/text/ch1.xhtml": chapter})


def _nested_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as inner:
        inner.writestr("zeros", b"\0" * 50_000_000)
    return out.getvalue()


def test_a_nested_zip_is_copied_never_unpacked():
    inner = _nested_zip()
    prepared = prepare("epub", epub_bytes({"OEBPS/images/inner.zip": inner}), 300)
    output = prepared.render(list(prepared.units))
    assert entries(output)["OEBPS/images/inner.zip"] == inner


BOMB = '<!DOCTYPE html [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
HOSTILE = {
    "bomb": (lambda: epub_bomb(), DocumentTooComplex, "TRANSQ_DOCX_UNPACKED_RATIO"),
    "parts": (lambda: epub_bomb(600_000), DocumentTooComplex, "TRANSQ_MAX_DOCUMENT_PARTS"),
    "entities": (
        lambda: epub_bytes({"OEBPS/text/ch1.xhtml": CHAPTER_1.replace(XHTML11, BOMB).replace("见下文", "&b;")}),
        DocumentError,
        "ch1.xhtml declares XML entities",
    ),
    "external-entity": (
        lambda: epub_bytes(
            {"OEBPS/content.opf": OPF.replace("<package", '<!DOCTYPE p [<!ENTITY x SYSTEM "/etc/passwd">]><package')}
        ),
        DocumentError,
        "content.opf declares XML entities",
    ),
    "traversal-name": (lambda: epub_bytes({"../../evil.sh": b"x"}), DocumentError, "leads out of the book"),
    "absolute-name": (lambda: epub_bytes({"/etc/cron.d/x": b"x"}), DocumentError, "leads out of the book"),
    "traversal-href": (
        lambda: epub_bytes({"OEBPS/content.opf": OPF.replace('href="style/main.css"', 'href="../../etc/passwd"')}),
        DocumentError,
        "outside the book",
    ),
    "drm": (
        lambda: epub_bytes({"META-INF/encryption.xml": encryption_xml("http://www.w3.org/2001/04/xmlenc#aes128-cbc")}),
        DocumentError,
        r"encrypted \(DRM",
    ),
    "no-container": (lambda: epub_bytes({"META-INF/container.xml": None}), DocumentError, "no META-INF/container.xml"),
    "no-package": (
        lambda: epub_bytes({"OEBPS/content.opf": None}),
        DocumentError,
        "OEBPS/content.opf, which the book does not hold",
    ),
    "malformed-chapter": (
        lambda: epub_bytes({"OEBPS/text/chapter 2.xhtml": "<html><body><p>没有结束</body></html>"}),
        DocumentError,
        "chapter 2.xhtml is not well-formed XML",
    ),
    "html-chapter": (
        lambda: epub_bytes(
            {
                "OEBPS/content.opf": OPF.replace(
                    '"text/ch1.xhtml" media-type="application/xhtml+xml"', '"text/ch1.xhtml" media-type="text/html"'
                )
            }
        ),
        DocumentError,
        "ch1.xhtml is text/html, not XHTML",
    ),
    "missing-chapter": (lambda: epub_bytes({"OEBPS/text/ch1.xhtml": None}), DocumentError, "does not hold"),
    "latin1-chapter": (
        lambda: epub_bytes({"OEBPS/text/ch1.xhtml": "<html><p>caf\xe9</p></html>".encode("latin-1")}),
        DocumentError,
        "not UTF-8",
    ),
    "not-a-zip": (lambda: b"PK\x03\x04 not really", DocumentError, "not a readable zip"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_or_broken_books_are_refused(case):
    make, error, message = HOSTILE[case]
    with pytest.raises(error, match=message):
        prepare("epub", make(), 300, DocumentLimits(max_parts=50_000))


def test_a_corrupt_entry_is_refused_before_anything_is_translated():
    data = bytearray(epub_bytes())
    at = bytes(data).index(b"serif.otf") + len(b"serif.otf") + 40  # inside the font's deflated bytes
    data[at] ^= 0xFF
    with pytest.raises(DocumentError, match="fonts/serif.otf cannot be read"):
        prepare("epub", bytes(data), 300)


def test_a_book_of_many_entries_is_refused_while_its_entries_are_checked():
    many = {f"OEBPS/images/{n}.png": b"" for n in range(2_000)}  # empty, and few elements: under 2,000 parts
    prepare("epub", epub_bytes(), 300, DocumentLimits(max_parts=2_000))
    with pytest.raises(DocumentTooComplex, match="TRANSQ_MAX_DOCUMENT_PARTS"):
        prepare("epub", epub_bytes(many), 300, DocumentLimits(max_parts=2_000))


def test_a_foreign_chapter_is_kept_and_its_xhtml_fallback_translated():
    opf = OPF.replace(
        '<item id="css"',
        '<item id="math" href="text/m.xml" media-type="application/mathml+xml" fallback="ch2"/><item id="css"',
    ).replace('<itemref idref="ch2"/>', '<itemref idref=" math "/>')  # an id with spaces around it, too
    math = b'<math xmlns="http://www.w3.org/1998/Math/MathML"><mi>x</mi></math>'
    prepared = prepare("epub", epub_bytes({"OEBPS/content.opf": opf, "OEBPS/text/m.xml": math}), 300)
    output = entries(prepared.render([unit + MARK for unit in prepared.units]))
    assert output["OEBPS/text/m.xml"] == math and MARK in output["OEBPS/text/chapter 2.xhtml"].decode()


def test_names_are_compared_in_their_composed_form():
    composed = "OEBPS/text/caf\u00e9.xhtml"
    opf = OPF.replace("text/ch1.xhtml", "text/cafe\u0301.xhtml")  # decomposed é in the manifest
    prepared = prepare("epub", epub_bytes({"OEBPS/content.opf": opf, composed: CHAPTER_1}), 300)
    assert "防止容器耗尽主机资源。" in prepared.units

"""Hostile documents (and benign ones of the same size) for bench.documents_hostile and the reliability
tests: each is small enough to upload, and cost seconds to minutes of CPU or gigabytes of memory to parse
before the parsers were bounded (issue 19)."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

MIB = 1 << 20
_TIMING = "00:00:01,000 --> 00:00:02,000"
_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


@dataclass(frozen=True)
class Case:
    name: str
    format: str
    data: bytes
    benign: str = ""  # the name of the benign case of the same format and size it is compared with


def _fill(head: str, unit: str, tail: str, size: int) -> bytes:
    count = max(1, (size - len(head.encode()) - len(tail.encode())) // len(unit.encode()))
    return (head + unit * count + tail).encode()


def html_stray_closes(size: int) -> bytes:
    """Thousands of inline open tags, then as many stray closing tags of another name."""
    half = size // 2
    return _fill("<p>", "<b>", "字", half) + _fill("", "</i>", "</p>", size - half)


def html_unclosed(construct: str, size: int) -> bytes:
    """`<!--`, `<!` or `<a ` over and over, never closed."""
    return _fill("<p>字。", construct, "", size)


def html_benign(size: int) -> bytes:
    paragraph = '<p>这是一个普通的句子，里面有<b>加粗</b>的文字和<a href="#x">一个链接</a>，句子比较长一些。</p>\n'
    return _fill("<html><body>\n", paragraph, "</body></html>\n", size)


def markdown_table(rows: int) -> bytes:
    return ("| 列一 | 列二 |\n|---|---|\n" + "| 字 | 词 |\n" * rows).encode()


def markdown_benign(size: int) -> bytes:
    paragraph = "这是一个普通的段落，里面有*强调*的文字和[一个链接](https://example.com)，还有一些其他的内容。\n\n"
    return _fill("# 标题\n\n", paragraph, "", size)


def srt_cues(size: int) -> bytes:
    """As many one-character subtitles as fit."""
    count = size // len(f"99999\n{_TIMING}\n字\n\n".encode())
    return "".join(f"{n}\n{_TIMING}\n字\n\n" for n in range(1, count + 1)).encode()


def srt_tag_flood(size: int) -> bytes:
    return _fill(f"1\n{_TIMING}\n", "<i><b>字", "\n", size)


def srt_benign(size: int) -> bytes:
    line = "这是一个普通的句子，<i>有点长</i>。\n第二行字幕。"
    count = size // len(f"9999\n{_TIMING}\n{line}\n\n".encode())
    return "".join(f"{n}\n{_TIMING}\n{line}\n\n" for n in range(1, count + 1)).encode()


def docx_with_body(paragraphs: int, paragraph_xml: str) -> bytes:
    """A .docx (python-docx's own template) whose body is `paragraph_xml` `paragraphs` times, streamed
    into the archive (the unpacked body may be far larger than this process should hold)."""
    from docx import Document

    template = io.BytesIO()
    Document().save(template)
    out = io.BytesIO()
    with zipfile.ZipFile(template) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if info.filename != "word/document.xml":
                target.writestr(info, source.read(info.filename))
                continue
            entry = zipfile.ZipInfo("word/document.xml")
            entry.compress_type = zipfile.ZIP_DEFLATED
            with target.open(entry, "w", force_zip64=True) as body:
                body.write(
                    f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document {_W}><w:body>'.encode()
                )
                chunk = (paragraph_xml * 1000).encode()
                for _ in range(paragraphs // 1000):
                    body.write(chunk)
                body.write((paragraph_xml * (paragraphs % 1000)).encode())
                body.write(b"<w:sectPr/></w:body></w:document>")
    return out.getvalue()


def docx_bomb(unpacked: int = 100 * 1000 * 1000) -> bytes:
    """A document.xml of about `unpacked` bytes that deflates to a few hundred KiB."""
    paragraph = "<w:p><w:r><w:t>字</w:t></w:r></w:p>"
    return docx_with_body(unpacked // len(paragraph.encode()), paragraph)


def docx_runs(runs: int, per_paragraph: int = 1000) -> bytes:
    """`runs` one-character runs of the same formatting, `per_paragraph` to a paragraph."""
    paragraph = "<w:p>" + "<w:r><w:t>字</w:t></w:r>" * per_paragraph + "</w:p>"
    return docx_with_body(max(1, runs // per_paragraph), paragraph)


def docx_benign(paragraphs: int) -> bytes:
    from docx import Document

    document = Document()
    for number in range(paragraphs):
        paragraph = document.add_paragraph(f"第{number}段：今年的收入增长了百分之{number % 97}，")
        paragraph.add_run("我们很满意").bold = True
        paragraph.add_run(f"，明年的目标是{number * 7 % 1000}万。")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


_CONTAINER = (
    '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>'
)


def epub_book(chapters: list[str], head: str = "") -> bytes:
    """An EPUB 3 book of XHTML chapters (each the body of one; `head` goes before the root element)."""
    items = "".join(
        f'<item id="c{n}" href="c{n}.xhtml" media-type="application/xhtml+xml"/>' for n in range(len(chapters))
    )
    spine = "".join(f'<itemref idref="c{n}"/>' for n in range(len(chapters)))
    opf = (
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:title>书名</dc:title></metadata><manifest>{items}</manifest><spine>{spine}</spine></package>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", _CONTAINER)
        book.writestr("content.opf", opf)
        for number, body in enumerate(chapters):
            xhtml = f'{head}<html xmlns="http://www.w3.org/1999/xhtml"><head><title>第{number}章</title></head><body>{body}</body></html>'
            book.writestr(f"c{number}.xhtml", xhtml)
    return out.getvalue()


def epub_benign(paragraphs: int, chapters: int = 10) -> bytes:
    """A novel: chapters of paragraphs with some bold and links."""
    per = paragraphs // chapters
    body = "".join(
        f'<p>第{n}段：今年的收入增长了百分之{n % 97}，<b>我们很满意</b>，<a href="#x">明年</a>的目标是{n * 7 % 1000}万。</p>'
        for n in range(per)
    )
    return epub_book([body] * chapters)


def epub_entity_bomb() -> bytes:
    """A billion laughs in a chapter's DOCTYPE (entities are never expanded; the chapter is refused)."""
    levels = '<!ENTITY a "aaaaaaaaaa">' + "".join(
        f'<!ENTITY {chr(98 + n)} "{("&" + chr(97 + n) + ";") * 10}">' for n in range(8)
    )
    return epub_book(["<p>&i;</p>"], f"<!DOCTYPE html [{levels}]>")


def cases(size: int = MIB) -> list[Case]:
    """The hostile cases of issue 19 at `size` bytes (the .docx ones at the issue's sizes), and their
    benign counterparts."""
    bomb = docx_bomb()
    return [
        Case("html: benign", "html", html_benign(size)),
        Case("html: inline opens + stray closes", "html", html_stray_closes(size), "html: benign"),
        Case("html: 24k opens + stray closes (under the limit)", "html", html_stray_closes(168_000), "html: benign"),
        Case("html: unclosed <!--", "html", html_unclosed("<!--", size), "html: benign"),
        Case("html: unclosed <!", "html", html_unclosed("<!", size), "html: benign"),
        Case("html: unclosed <a", "html", html_unclosed("<a ", size), "html: benign"),
        Case("markdown: benign", "markdown", markdown_benign(size)),
        Case("markdown: table of 30k rows", "markdown", markdown_table(30_000), "markdown: benign"),
        Case("srt: benign", "srt", srt_benign(size)),
        Case("srt: one-character cues", "srt", srt_cues(size), "srt: benign"),
        Case("srt: 90k cues", "srt", srt_cues(90_000 * 38), "srt: benign"),
        Case("srt: tag flood", "srt", srt_tag_flood(size), "srt: benign"),
        Case("docx: benign", "docx", docx_benign(1500)),
        Case("docx: 100 MB document.xml", "docx", bomb, "docx: benign"),
        Case("docx: 200k runs", "docx", docx_runs(200_000), "docx: benign"),
        Case("docx: 45k runs (under the limit)", "docx", docx_runs(45_000, per_paragraph=100), "docx: benign"),
        Case("epub: benign (3,000 paragraphs)", "epub", epub_benign(3000)),
        Case("epub: 100 MB chapter", "epub", epub_book(["<p>字</p>" * 10_000_000]), "epub: benign (3,000 paragraphs)"),
        Case("epub: 200k paragraphs", "epub", epub_book(["<p>字</p>" * 200_000]), "epub: benign (3,000 paragraphs)"),
        Case("epub: entity bomb", "epub", epub_entity_bomb(), "epub: benign (3,000 paragraphs)"),
        Case(
            "epub: 7k paragraphs, 42k tags (under the limit)",
            "epub",
            epub_benign(7_000, chapters=40),
            "epub: benign (3,000 paragraphs)",
        ),
    ]

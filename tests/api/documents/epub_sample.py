"""A small EPUB 3 book written entry by entry (so each entry's bytes are known): the `mimetype` first and
stored, the container, a package document (a title, an author, the language, a manifest with a stylesheet,
an image, a font and a chapter whose name holds a space), two chapters (one XHTML 1.1 with its DTD and
`&nbsp;`, one HTML5-style with inline SVG, a table, code and a `notranslate` paragraph), the navigation
document (table of contents and landmarks) and an NCX (its title, nested labels and a page list)."""

from __future__ import annotations

import io
import zipfile

CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"""
OPF = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid" xml:lang="zh">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="uid">urn:uuid:7f3e2b10-0000-4000-8000-000000000001</dc:identifier>
    <dc:title id="title">内存优化实践</dc:title>
    <dc:creator>张三</dc:creator>
    <dc:language>zh</dc:language>
    <meta property="dcterms:modified">2026-12-03T00:00:00Z</meta>
    <meta refines="#title" property="title-type">main</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
    <item id="ch1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="ch2" href="text/chapter%202.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style/main.css" media-type="text/css"/>
    <item id="cover" href="images/cover.png" media-type="image/png" properties="cover-image"/>
    <item id="font" href="fonts/serif.otf" media-type="font/otf"/>
  </manifest>
  <spine toc="ncx">
    <itemref idref="ch1"/>
    <itemref idref="ch2"/>
  </spine>
</package>
"""
XHTML11 = '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">'
CHAPTER_1 = f"""<?xml version="1.0" encoding="utf-8"?>
{XHTML11}
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh">
<head>
  <title>第一章 预加载</title>
  <link rel="stylesheet" type="text/css" href="../style/main.css"/>
</head>
<body>
  <h1 id="c1">第一章 预加载</h1>
  <p>防止容器耗尽主机资源。<b>首次请求触发加载</b>，后续复用，适合内存紧张环境。</p>
  <p>方案A：<a href="chapter%202.xhtml#c2">预加载模型</a>（推荐）&nbsp;见下文。<br/>日志记录内存快照，便于问题排查。</p>
  <p><img src="../images/cover.png" alt="封面"/>使用<code>fp16</code>或int8量化降低静态内存占用。</p>
  <pre>不要翻译这段代码。</pre>
</body>
</html>
"""
CHAPTER_2 = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="zh" xml:lang="zh">
<head><title>第二章 懒加载</title></head>
<body>
  <section epub:type="chapter">
    <h1 id="c2">第二章 懒加载</h1>
    <p>方案B：按需懒加载（节省冷启动内存）。</p>
    <table><tr><td>企业官网建设流程全解析</td><td>42</td></tr></table>
    <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text x="0" y="9">图</text></svg>
    <p class="notranslate">保持原样的段落。</p>
    <!-- 注释不翻译 -->
  </section>
</body>
</html>
"""
NAV = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="zh" xml:lang="zh">
<head><title>目录</title></head>
<body>
  <nav epub:type="toc" id="toc">
    <h1>目录</h1>
    <ol>
      <li><a href="text/ch1.xhtml">第一章 预加载</a></li>
      <li><a href="text/chapter%202.xhtml">第二章 懒加载</a></li>
    </ol>
  </nav>
  <nav epub:type="landmarks" hidden="">
    <ol><li><a epub:type="bodymatter" href="text/ch1.xhtml">正文</a></li></ol>
  </nav>
</body>
</html>
"""
NCX = """<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
  <head><meta name="dtb:uid" content="urn:uuid:7f3e2b10-0000-4000-8000-000000000001"/></head>
  <docTitle><text>内存优化实践</text></docTitle>
  <docAuthor><text>张三</text></docAuthor>
  <navMap>
    <navPoint id="n1" playOrder="1">
      <navLabel><text>第一章 预加载</text></navLabel>
      <content src="text/ch1.xhtml"/>
      <navPoint id="n1a" playOrder="2">
        <navLabel><text>方案A</text></navLabel>
        <content src="text/ch1.xhtml#c1"/>
      </navPoint>
    </navPoint>
    <navPoint id="n2" playOrder="3">
      <navLabel><text>第二章 懒加载</text></navLabel>
      <content src="text/chapter%202.xhtml"/>
    </navPoint>
  </navMap>
  <pageList><pageTarget id="p1" type="normal" value="1"><navLabel><text>1</text></navLabel>
    <content src="text/ch1.xhtml#c1"/></pageTarget></pageList>
</ncx>
"""
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
ENTRIES = {
    "mimetype": b"application/epub+zip",
    "META-INF/container.xml": CONTAINER.encode(),
    "OEBPS/content.opf": OPF.encode(),
    "OEBPS/nav.xhtml": NAV.encode(),
    "OEBPS/toc.ncx": NCX.encode(),
    "OEBPS/text/ch1.xhtml": CHAPTER_1.encode(),
    "OEBPS/text/chapter 2.xhtml": CHAPTER_2.encode(),
    "OEBPS/style/main.css": "body { font-family: serif; } /* 样式 */\n".encode(),
    "OEBPS/images/cover.png": PNG,
    "OEBPS/fonts/serif.otf": bytes(range(256)) * 4,
}
# The entries holding text to translate; every other one is copied byte for byte.
TRANSLATED = (
    "OEBPS/content.opf",
    "OEBPS/nav.xhtml",
    "OEBPS/toc.ncx",
    "OEBPS/text/ch1.xhtml",
    "OEBPS/text/chapter 2.xhtml",
)


def epub_bytes(replaced: dict[str, bytes | str | None] | None = None) -> bytes:
    """The book, with the entries of `replaced` replaced, added, or (None) left out."""
    entries = {**ENTRIES, **(replaced or {})}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        for name, data in entries.items():
            if data is None:
                continue
            stored = name == "mimetype"
            book.writestr(name, data, zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)
    return out.getvalue()

"""Documents of every format, in Chinese, with the markup each format can hold."""

from __future__ import annotations

import io

import docx

HTML = """<!DOCTYPE html>
<html lang="zh"><head><meta charset="utf-8"><title>测试页面</title>
<style>p { color: red; }</style><script>var s = "不要翻译。";</script></head>
<body>
<h1 class="title" id="top">欢迎使用<em>翻译</em>服务</h1>
<p>这是第一句话。这是一个<a href="https://example.com/a?b=1&amp;c=2" title="链接">重要的链接</a>，请点击。<br>
换行以后的句子。</p>
<!-- 注释不翻译 -->
<ul><li>第一项</li><li><strong>第二项</strong>很好</li></ul>
<p>运行 <code>pip install transq</code> 命令。<img src="a.png" alt="图片"></p>
<pre>代码块不翻译。</pre>
<p translate="no">品牌名称</p>
<table><tr><th>名称</th><td>价格 &lt; 100 元</td></tr></table>
</body></html>
"""

MARKDOWN = """# 使用*说明*

这是第一段。它有**加粗**的文字和[一个链接](https://example.com "标题")，
还有 `inline code` 和 ~~删除线~~。

> 引用的句子。

1. 第一步：安装。
2. 第二步：运行 <kbd>Ctrl</kbd> 键。

| 名称 | 说明 |
|------|------|
| 缓存 | 重复的句子 |

```python
print("不要翻译")
```

![图片](img.png)

结束。\
最后一行。
"""

SRT = """1
00:00:01,000 --> 00:00:03,500
你好，欢迎观看。
这是第一条字幕。

2
00:00:04,000 --> 00:00:06,000
<i>这句话是斜体的。</i>

3
00:01:07,250 --> 00:01:09,999
第三条<b>字幕</b>。
"""


def docx_bytes() -> bytes:
    document = docx.Document()
    document.add_heading("年度报告", level=1)
    paragraph = document.add_paragraph("今年的收入")
    bold = paragraph.add_run("增长了百分之十")
    bold.bold = True
    paragraph.add_run("，我们很满意。明年会更好。")
    italic = document.add_paragraph().add_run("斜体的段落。")
    italic.italic = True
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "项目"
    table.cell(0, 1).text = "金额"
    table.cell(1, 0).text = "收入"
    table.cell(1, 1).text = "一百万"
    document.sections[0].header.paragraphs[0].text = "公司机密"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


# Translators' files: untranslated units whose texts the copy model copies (worker/translation/model/data/
# zh_sentences.txt), placeholders and inline elements between its sentences, and units already translated.
PO = r"""# 翻译文件的注释
msgid ""
msgstr ""
"Project-Id-Version: transq 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

#. 开发者的说明
#: src/app.c:10
#, c-format
msgctxt "menu"
msgid "防止容器耗尽主机资源。%d"
msgstr ""

#, python-brace-format
msgid "首次请求触发加载，后续复用，适合内存紧张环境。{name}防止容器耗尽主机资源。\n"
msgstr ""

msgid "方案A：预加载模型（推荐）"
msgid_plural "方案B：按需懒加载（节省冷启动内存）"
msgstr[0] ""
msgstr[1] ""

msgid "日志记录内存快照，便于问题排查"
msgstr "Log memory snapshots"

#, fuzzy
msgid "企业官网建设流程全解析"
msgstr "A draft"

#~ msgid "防止容器耗尽主机资源。"
#~ msgstr "Obsolete"
""".encode()

XLIFF12 = """<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="page.html" source-language="zh" target-language="en" datatype="html">
    <body>
      <group id="start" resname="start-page">
        <trans-unit id="button" resname="button-help">
          <source>点击<g id="1" ctype="bold">“立即翻译”按钮</g>右侧将实时显示地道英文译文。</source>
          <note from="developer">开发者的说明</note>
          <context-group purpose="location"><context context-type="linenumber">12</context></context-group>
        </trans-unit>
      </group>
      <trans-unit id="snapshot">
        <source>日志记录内存快照，便于问题排查<x id="2" ctype="lb"/>防止容器耗尽主机资源。</source>
      </trans-unit>
      <trans-unit id="done">
        <source>企业官网建设流程全解析</source>
        <target state="final">Done by a translator</target>
      </trans-unit>
      <trans-unit id="brand" translate="no">
        <source>方案A：预加载模型（推荐）</source>
      </trans-unit>
    </body>
  </file>
</xliff>
""".encode()

XLIFF20 = """<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="zh" trgLang="en">
  <file id="f1" original="guide.md">
    <unit id="u1" name="intro">
      <notes><note category="context">说明文字</note></notes>
      <originalData><data id="d1">&lt;br/&gt;</data></originalData>
      <segment id="s1">
        <source>点击<pc id="p1">“立即翻译”按钮</pc>右侧将实时显示地道英文译文。</source>
      </segment>
      <segment id="s2">
        <source>防止容器耗尽主机资源。<ph id="ph1" dataRef="d1"/>首次请求触发加载，后续复用，适合内存紧张环境。</source>
      </segment>
    </unit>
    <unit id="u2">
      <segment id="s3" state="final">
        <source>企业官网建设流程全解析</source>
        <target>Done by a translator</target>
      </segment>
    </unit>
  </file>
</xliff>
""".encode()


def xlsx_bytes() -> bytes:
    """A workbook of string cells (one rich, one shared by two cells), numbers, a date, formulas, two sheets."""
    import datetime

    import openpyxl
    from openpyxl.cell.rich_text import CellRichText, TextBlock
    from openpyxl.cell.text import InlineFont

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "数据"
    sheet["A1"] = "企业官网建设流程全解析"
    sheet["A2"] = 42
    sheet["A3"] = "=A2*2"
    sheet["A4"] = datetime.date(2026, 12, 3)
    sheet["B1"] = CellRichText(
        "防止容器耗尽主机资源。", TextBlock(InlineFont(b=True), "首次请求触发加载，后续复用，适合内存紧张环境。")
    )
    sheet["B2"] = "企业官网建设流程全解析"
    sheet["B3"] = '=CONCATENATE(A1, "！")'
    other = book.create_sheet("说明")
    other["A1"] = "日志记录内存快照，便于问题排查"
    other["A2"] = 3.5
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def pptx_bytes() -> bytes:
    """Two slides: a title and subtitle, a text box of two runs (one bold) and a line break, a table, notes."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "企业官网建设流程全解析"
    first.placeholders[1].text = "日志记录内存快照，便于问题排查"
    first.notes_slide.notes_text_frame.text = "完成内存优化后，可进一步探索以下方向："
    second = deck.slides.add_slide(deck.slide_layouts[6])
    paragraph = second.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(1)).text_frame.paragraphs[0]
    paragraph.add_run().text = "防止容器耗尽主机资源。"
    bold = paragraph.add_run()
    bold.text = "首次请求触发加载，后续复用，适合内存紧张环境。"
    bold.font.bold = True
    paragraph.add_line_break()
    paragraph.add_run().text = "方案A：预加载模型（推荐）"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(3), Inches(6), Inches(1)).table
    table.cell(0, 0).text = "方案B：按需懒加载（节省冷启动内存）"
    table.cell(0, 1).text = "42"
    table.cell(1, 0).text = "使用fp16或int8量化降低静态内存占用"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def odt_bytes() -> bytes:
    """A heading, a paragraph with a bold span, a link and a line break, a note, and a table cell."""
    from odf.opendocument import OpenDocumentText
    from odf.style import Style, TextProperties
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import A, H, LineBreak, Note, NoteBody, NoteCitation, P, Span

    document = OpenDocumentText()
    bold = Style(name="Bold", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    document.automaticstyles.addElement(bold)
    document.text.addElement(H(outlinelevel=1, text="企业官网建设流程全解析"))
    paragraph = P(text="防止容器耗尽主机资源。")
    paragraph.addElement(Span(stylename=bold, text="首次请求触发加载，后续复用，适合内存紧张环境。"))
    paragraph.addElement(LineBreak())
    paragraph.addElement(A(href="https://example.com/", text="方案A：预加载模型（推荐）"))
    note = Note(id="n1", noteclass="footnote")
    note.addElement(NoteCitation(text="1"))
    body = NoteBody()
    body.addElement(P(text="日志记录内存快照，便于问题排查"))
    note.addElement(body)
    paragraph.addElement(note)
    document.text.addElement(paragraph)
    table = Table(name="表")
    table.addElement(TableColumn())
    row = TableRow()
    cell = TableCell()
    cell.addElement(P(text="使用fp16或int8量化降低静态内存占用"))
    row.addElement(cell)
    table.addElement(row)
    document.text.addElement(table)
    out = io.BytesIO()
    document.write(out)
    return out.getvalue()

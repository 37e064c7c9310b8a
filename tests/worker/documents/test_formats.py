"""Each format parsed, translated with stand-in translations and rebuilt: the structure (read by the
format's own parser) is identical and only the text changed. No model here: the stand-ins are chosen to
be hard (longer, shorter, with markup characters) and the real model's round trip is in
tests/integration/test_documents.py."""

import io

import docx
import pytest

from tests.api.documents import samples
from tests.api.documents.shapes import docx_shape, html_shape, markdown_shape, srt_shape
from worker.documents.formats import DocumentError, prepare

WORDS = ["alpha", "beta*", "gamma_", "[delta]", "<eps>", "zeta & eta", "theta|iota"]


def stand_ins(units: list[str]) -> list[str]:
    """A deterministic 'translation' of each unit, of another length, with characters that are markup."""
    out = []
    for index, unit in enumerate(units):
        words = [WORDS[(index + k) % len(WORDS)] for k in range(1 + len(unit) % 6)]
        out.append(" ".join(words).capitalize() + ".")
    return out


def rebuilt(fmt: str, source):  # type: ignore[no-untyped-def]
    prepared = prepare(fmt, source, 300)
    assert prepared.units, "the document has text to translate"
    return prepared.units, prepared.render(stand_ins(prepared.units))


def test_html_keeps_every_tag_attribute_comment_and_script():
    units, output = rebuilt("html", samples.HTML)
    assert html_shape(output) == html_shape(samples.HTML)
    assert "不要翻译" in output and "代码块不翻译。" in output and "品牌名称" in output and "注释不翻译" in output
    assert "pip install transq" in output
    assert not any("不要翻译" in unit or "品牌" in unit for unit in units)
    assert "<eps>" not in output and "&lt;eps&gt;" in output  # a translation's '<' is text, not a tag
    assert "重要的链接" not in output and "欢迎使用" not in output  # the text around and inside tags is translated


def test_html_inline_tag_does_not_split_its_sentence():
    units, _ = rebuilt("html", samples.HTML)
    assert "这是一个重要的链接，请点击。" in units  # the whole sentence, the link's text inside it
    assert "重要的链接" in units  # and the link's own text, to find it in the translation


def test_html_link_wraps_its_own_words_when_they_appear_in_the_sentence():
    prepared = prepare("html", '<p>请看<a href="/x">这个链接</a>。</p>', 300)
    assert prepared.units == ["请看这个链接。", "这个链接"]
    output = prepared.render(["Please see this link.", "this link"])
    assert output == '<p>Please see <a href="/x">this link</a>.</p>'


def test_markdown_keeps_blocks_code_links_and_emphasis():
    units, output = rebuilt("markdown", samples.MARKDOWN)
    assert markdown_shape(output) == markdown_shape(samples.MARKDOWN)
    assert 'print("不要翻译")' in output and "`inline code`" in output and "<kbd>Ctrl</kbd>" in output
    assert '](https://example.com "标题")' in output and "![图片](img.png)" in output
    assert not any("不要翻译" in unit for unit in units)


def test_markdown_escapes_what_a_translation_holds():
    prepared = prepare("markdown", "普通的句子。\n", 300)
    output = prepared.render(["a *star* and [brackets] and <b>"])
    assert markdown_shape(output) == markdown_shape("普通的句子。\n")


def test_srt_keeps_numbering_timings_and_tags():
    units, output = rebuilt("srt", samples.SRT)
    assert srt_shape(output) == srt_shape(samples.SRT)
    assert "00:01:07,250 --> 00:01:09,999" in output
    assert "你好，欢迎观看。" in units  # a sentence over two lines is one sentence
    first = output.split("\n\n")[0].split("\n")
    assert len(first) == 4  # number, timing, and two lines again


def test_docx_keeps_paragraphs_runs_tables_and_headers():
    source = samples.docx_bytes()
    units, output = rebuilt("docx", source)
    assert docx_shape(output) == docx_shape(source)
    text = "\n".join(p.text for p in docx.Document(io.BytesIO(output)).paragraphs)
    assert "收入" not in text and "Alpha" in text or "Beta" in text
    assert "今年的收入增长了百分之十，我们很满意。" in units  # the bold run does not split the sentence


def test_plain_text_keeps_its_paragraphs():
    units, output = rebuilt("text", "第一段。第二句。\n\n第二段。\n")
    assert units == ["第一段。", "第二句。", "第二段。"]
    assert output.count("\n\n") == 1 and output.endswith("\n")


@pytest.mark.parametrize(
    "fmt, source, message",
    [
        ("srt", "1\nnot a timing\ntext\n", "SubRip"),
        ("docx", b"PK\x03\x04 not really a zip", "docx"),
        ("docx", b"just bytes", "zip"),
        ("text", b"\xff\xfe\xfd", "UTF"),
    ],
)
def test_malformed_documents_are_document_errors(fmt, source, message):
    with pytest.raises(DocumentError, match=message):
        prepare(fmt, source, 300)

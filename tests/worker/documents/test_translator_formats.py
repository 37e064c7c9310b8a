"""Translators' files (gettext PO, XLIFF 1.2 and 2.x) through prepare/render with stand-in translations:
what is sent, what comes back, what stays as it was, and files that are refused."""

import shutil
import subprocess

import pytest

from shared.document_formats import DocumentError, DocumentTooComplex
from tests.api.documents import samples
from tests.api.documents.shapes import po_shape, po_targets, xliff_inline, xliff_shape, xliff_targets
from worker.documents.formats import DocumentLimits, prepare
from worker.documents.formats.po_format import PLACEHOLDER


def marked(units: list[str]) -> list[str]:
    return [f"«{unit}»" for unit in units]


def msgfmt_check(data: bytes, tmp_path) -> None:  # type: ignore[no-untyped-def]
    if shutil.which("msgfmt") is None:
        pytest.skip("gettext's msgfmt is not installed")
    path = tmp_path / "out.po"
    path.write_bytes(data)
    done = subprocess.run(["msgfmt", "--check", "-o", "/dev/null", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_po_translates_the_untranslated_messages_and_keeps_the_rest(tmp_path):
    prepared = prepare("po", samples.PO, 300)
    assert prepared.units == [  # sentences, placeholders out; the translated, fuzzy and obsolete ones not sent
        "防止容器耗尽主机资源。",
        "首次请求触发加载，后续复用，适合内存紧张环境。",
        "防止容器耗尽主机资源。",
        "方案A：预加载模型（推荐）",
        "方案B：按需懒加载（节省冷启动内存）",
    ]
    output = prepared.render(marked(prepared.units))
    assert po_shape(output) == po_shape(samples.PO)
    before, after = po_targets(samples.PO), po_targets(output)
    assert after["menu\x04防止容器耗尽主机资源。%d"] == ["«防止容器耗尽主机资源。»%d"]
    assert after["首次请求触发加载，后续复用，适合内存紧张环境。{name}防止容器耗尽主机资源。\n"] == [
        "«首次请求触发加载，后续复用，适合内存紧张环境。» {name}«防止容器耗尽主机资源。»\n"  # a space after »
    ]
    assert after["方案A：预加载模型（推荐）"] == [
        "«方案A：预加载模型（推荐）»",
        "«方案B：按需懒加载（节省冷启动内存）»",
    ]
    for kept in ("日志记录内存快照，便于问题排查", "企业官网建设流程全解析", "防止容器耗尽主机资源。"):
        assert after[kept] == before[kept]
    msgfmt_check(output, tmp_path)


def test_po_placeholders_come_back_in_order_whatever_the_translation(tmp_path):
    prepared = prepare("po", samples.PO, 300)
    output = prepared.render(["Translated, no sentence end", "1\n2", "\nThree\n\n", "Four", "Five"])
    for message, targets in po_targets(output).items():
        source = message.split("\x04")[-1]
        for target in filter(None, targets):
            assert PLACEHOLDER.findall(target) == PLACEHOLDER.findall(source), (message, target)
    msgfmt_check(output, tmp_path)


def test_po_a_translations_own_percent_signs_braces_and_line_breaks_are_no_directives(tmp_path):
    prepared = prepare("po", samples.PO, 300)
    output = prepared.render(["100% {x}", "\n", "%s {y}", "", "\n\n%d"])
    targets = po_targets(output)
    assert targets["menu\x04防止容器耗尽主机资源。%d"] == ["100%% {x}%d"]  # c-format: % doubled
    assert targets["首次请求触发加载，后续复用，适合内存紧张环境。{name}防止容器耗尽主机资源。\n"] == [
        "{name}%s {{y}}\n"  # python-brace-format: braces doubled; the source's trailing line break kept
    ]
    msgfmt_check(output, tmp_path)


def test_po_retranslate_translates_every_message_but_obsolete_ones():
    prepared = prepare("po", samples.PO, 300, retranslate=True)
    assert "日志记录内存快照，便于问题排查" in prepared.units and "企业官网建设流程全解析" in prepared.units
    after = po_targets(prepared.render(marked(prepared.units)))
    assert after["日志记录内存快照，便于问题排查"] == ["«日志记录内存快照，便于问题排查»"]
    assert after["防止容器耗尽主机资源。"] == ["Obsolete"]


def test_po_plural_forms_follow_the_header():
    one = samples.PO.replace(b"nplurals=2; plural=(n != 1);", b"nplurals=1; plural=0;")
    prepared = prepare("po", one, 300)
    after = po_targets(prepared.render(marked(prepared.units)))
    assert after["方案A：预加载模型（推荐）"] == ["«方案B：按需懒加载（节省冷启动内存）»"]


def test_po_in_a_legacy_charset_becomes_utf8_only_when_the_translation_needs_it():
    latin = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=ISO-8859-1\\n"\n\nmsgid "Caf\u00e9 ouvert."\nmsgstr ""\n'
    data = latin.encode("latin-1")
    prepared = prepare("po", data, 300)
    assert prepared.units == ["Café ouvert."]
    assert prepared.render(["Café open."]).decode("latin-1").endswith('msgstr "Café open."\n')
    output = prepare("po", data, 300).render(["咖啡馆开门了。"])
    assert b"charset=UTF-8" in output and 'msgstr "咖啡馆开门了。"' in output.decode()


@pytest.mark.parametrize("sample", [samples.XLIFF12, samples.XLIFF20], ids=["1.2", "2.0"])
def test_xliff_translates_the_units_without_a_target_keeping_inline_elements(sample):
    prepared = prepare("xliff", sample, 300)
    assert "企业官网建设流程全解析" not in prepared.units  # translated already
    assert "方案A：预加载模型（推荐）" not in prepared.units  # translate="no"
    output = prepared.render(marked(prepared.units))
    assert xliff_shape(output) == xliff_shape(sample)  # ids, notes, contexts, groups, sources: as they were
    targets, inline = xliff_targets(output), xliff_inline(sample)
    for unit, (attributes, elements, text) in targets.items():
        if "translator" in text:
            assert xliff_targets(sample)[unit] == (attributes, elements, text)
            continue
        assert elements == inline[unit] and text.startswith("«") and text.endswith("»"), (unit, text)
        if sample is samples.XLIFF12:
            assert attributes == {"state": "translated", "state-qualifier": "mt-suggestion"}


def test_xliff_wraps_a_spans_own_translation():
    prepared = prepare("xliff", samples.XLIFF12, 300)
    assert prepared.units[:2] == ["点击“立即翻译”按钮右侧将实时显示地道英文译文。", "“立即翻译”按钮"]
    output = prepared.render(["Click the “Translate” button.", "“Translate” button", "a", "b"]).decode()
    assert (
        '<target state="translated" state-qualifier="mt-suggestion">Click the <g id="1" ctype="bold">“Translate” button</g>.</target>'
        in output
    )


def test_xliff_retranslate_rewrites_every_translatable_target():
    prepared = prepare("xliff", samples.XLIFF20, 300, retranslate=True)
    assert "企业官网建设流程全解析" in prepared.units
    output = prepared.render(marked(prepared.units))
    assert xliff_targets(output)["s3"] == ({}, [], "«企业官网建设流程全解析»")


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE xliff [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file original="x" source-language="zh"
datatype="plaintext"><body><trans-unit id="1"><source>&d;&d;&d;</source></trans-unit></body></file></xliff>"""
EXTERNAL = b"""<?xml version="1.0"?><!DOCTYPE xliff [<!ENTITY e SYSTEM "file:///etc/passwd">]>
<xliff version="2.0" xmlns="urn:oasis:names:tc:xliff:document:2.0" srcLang="zh"><file id="f"><unit id="u">
<segment><source>&e;</source></segment></unit></file></xliff>"""


@pytest.mark.parametrize(
    "fmt, data, message",
    [
        ("po", b'msgid "unterminated\nmsgstr ""\n', "not a valid PO file"),
        ("po", b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=NO-SUCH-CHARSET\\n"\n', "not a valid PO"),
        ("po", 'msgid "x"\nmsgstr ""\n'.encode("utf-16"), "not a valid PO file"),
        ("xliff", b"<xliff version='1.2'><file>", "not well-formed"),
        ("xliff", b"<html><body>hi</body></html>", "root element is <html>"),
        ("xliff", BILLION_LAUGHS, "DOCTYPE"),
        ("xliff", EXTERNAL, "DOCTYPE"),
        ("xliff", b"\x00\x01binary", "not well-formed"),
    ],
)
def test_malformed_or_hostile_translator_files_are_document_errors(fmt, data, message):
    with pytest.raises(DocumentError, match=message):
        prepare(fmt, data, 300)


@pytest.mark.parametrize("fmt", ["po", "xliff"])
def test_translator_files_over_the_parts_limit_are_too_complex(fmt):
    if fmt == "po":
        data = b"".join(f'msgid "第{n}句。"\nmsgstr ""\n\n'.encode() for n in range(2000))
    else:
        units = "".join(f'<trans-unit id="{n}"><source>第{n}句。</source></trans-unit>' for n in range(2000))
        data = (
            '<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file original="x" '
            f'source-language="zh" datatype="plaintext"><body>{units}</body></file></xliff>'
        ).encode()
    assert len(prepare(fmt, data, 300, DocumentLimits(max_parts=10_000)).units) == 2000
    with pytest.raises(DocumentTooComplex):
        prepare(fmt, data, 300, DocumentLimits(max_parts=1000))


def test_a_translator_file_sent_as_text_is_refused():
    with pytest.raises(DocumentError, match="upload it to /v1/documents"):
        prepare("po", samples.PO.decode(), 300)

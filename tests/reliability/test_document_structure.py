"""RELIABILITY 64-66: a translation never changes a document's structure (translators' PO and XLIFF files
included: they parse again, with every id, note, context and placeholder kept), and a SubRip file reads
the same whatever its newlines. Each renderer gets adversarial stand-in translations (line breaks, blank lines,
block markers, timing lines, markup) and its output is read back by the format's own parser: the
structure must be the source's (tests/api/documents/shapes.py)."""

import itertools
import shutil
import subprocess

import pytest
import srt

from tests.api.documents import samples
from tests.api.documents.shapes import (
    html_shape,
    markdown_shape,
    po_shape,
    po_targets,
    srt_shape,
    xliff_inline,
    xliff_shape,
    xliff_targets,
)
from worker.documents.formats import prepare

HOSTILE = [
    "# A heading\n\n- a list item",
    "> a quote\n1. an ordered item",
    "```\nfenced",
    "| a | b |\n|---|---|",
    "<div>\nan HTML block",
    "a paragraph\n===",
    "    indented code",
    "- item",
    "1) first",
    "+ plus\r\n\r\n- minus",
    "2\n00:00:05,000 --> 00:00:06,000\nnot a cue",
    "3",
    "00:00:07,000 --> 00:00:08,000",
    "line\u2028separator\u2029paragraph\x0bvertical\x0cfeed\x85next",
    "\n\n",
    "",
    "<script>alert(1)</script>\n\n<p>",
]


def adversarial(units: list[str], shift: int = 0) -> list[str]:
    """A stand-in translation per unit: the hostile ones in turn, from the `shift`-th."""
    return [text for text, _ in zip(itertools.islice(itertools.cycle(HOSTILE), shift, None), units)]


@pytest.mark.parametrize("shift", range(len(HOSTILE)))
@pytest.mark.parametrize(
    "fmt, source, shape",
    [
        ("markdown", samples.MARKDOWN, markdown_shape),  # 64: never starts a block
        ("srt", samples.SRT, srt_shape),  # 65: never ends a cue
        ("html", samples.HTML, html_shape),  # 64: stays text
    ],
)
def test_64_65_translations_never_change_the_structure(fmt, source, shape, shift):
    prepared = prepare(fmt, source, 300)
    output = prepared.render(adversarial(prepared.units, shift))
    assert shape(output) == shape(source), output
    if fmt == "srt":  # no blank line inside a cue
        assert all(line.strip() for cue in srt.parse(output) for line in cue.content.split("\n"))


@pytest.mark.parametrize("newline", ["\r", "\r\n", "mixed"])
def test_66_subrip_reads_every_newline_convention(newline):
    lf = samples.SRT
    if newline == "mixed":
        lines = lf.split("\n")
        source = "".join(line + ("\r", "\r\n", "\n")[n % 3] for n, line in enumerate(lines[:-1])) + lines[-1]
    else:
        source = lf.replace("\n", newline)
    reference, prepared = prepare("srt", lf, 300), prepare("srt", source, 300)
    assert prepared.units == reference.units  # no cue merged into another, no timing line "translated"
    output = prepared.render(adversarial(prepared.units))
    assert srt_shape(output) == srt_shape(lf)


def test_66_inline_code_keeps_its_spaces_when_the_translation_closes_the_gap():
    source = "行内代码 `不要翻译` 保持原样。\n"
    prepared = prepare("markdown", source, 300)
    assert prepared.render(["行内代码 保持原样。"]) == source
    assert prepared.render(["Inline code stays as is."]) == "Inline code `不要翻译` stays as is.\n"


@pytest.mark.parametrize("shift", range(len(HOSTILE)))
@pytest.mark.parametrize(
    "fmt, source, shape",
    [("po", samples.PO, po_shape), ("xliff", samples.XLIFF12, xliff_shape), ("xliff", samples.XLIFF20, xliff_shape)],
    ids=["po", "xliff-1.2", "xliff-2.0"],
)
def test_64_translators_files_keep_their_structure(fmt, source, shape, shift, tmp_path):
    prepared = prepare(fmt, source, 300)
    output = prepared.render(adversarial(prepared.units, shift))
    assert shape(output) == shape(source), output.decode()  # it parses again, the same but for targets
    if fmt == "xliff":  # every target holds its source's inline elements, in order
        inline = xliff_inline(source)
        for unit, (_, elements, _) in xliff_targets(output).items():
            assert elements == inline[unit] or unit in xliff_targets(source), (unit, elements)
    elif shutil.which("msgfmt"):
        (tmp_path / "out.po").write_bytes(output)
        done = subprocess.run(["msgfmt", "--check", "-o", "/dev/null", str(tmp_path / "out.po")], capture_output=True)
        assert done.returncode == 0, done.stderr.decode()


@pytest.mark.parametrize("fmt, source", [("po", samples.PO), ("xliff", samples.XLIFF12), ("xliff", samples.XLIFF20)])
def test_64_translators_files_change_in_their_new_translations_only(fmt, source):
    """A model that changes every text: each untranslated unit gets a target that is its translation, the
    translated ones keep theirs, and nothing else changes (the copy model's run, through the whole stack, is
    tests/reliability/test_translator_files.py)."""
    prepared = prepare(fmt, source, 300)
    output = prepared.render([f"<{unit}>" for unit in prepared.units])
    targets = po_targets if fmt == "po" else (lambda data: {k: [v[2]] for k, v in xliff_targets(data).items()})
    before, after = targets(source), targets(output)
    changed = [unit for unit in after if after[unit] != before.get(unit)]
    assert changed and all(all(text.startswith("<") for text in after[unit]) for unit in changed)
    assert all(after[unit] == texts for unit, texts in before.items() if any(texts))


@pytest.mark.parametrize("shift", range(0, len(HOSTILE), 3))
def test_64_a_workbook_keeps_every_cell_but_its_strings(shift):
    import io

    import openpyxl

    source = samples.xlsx_bytes()
    prepared = prepare("xlsx", source, 300)
    output = prepared.render(adversarial(prepared.units, shift))
    before, after = (openpyxl.load_workbook(io.BytesIO(data), rich_text=True) for data in (source, output))
    assert before.sheetnames == after.sheetnames
    for sheet in before:
        for row in sheet.iter_rows():
            for cell in row:
                got = after[sheet.title][cell.coordinate]
                assert got.data_type == cell.data_type, cell.coordinate  # a blank translation keeps the source
                if cell.data_type != "s":
                    assert got.value == cell.value, cell.coordinate  # numbers, dates, formulas


@pytest.mark.parametrize("shift", range(0, len(HOSTILE), 3))
def test_64_a_presentation_keeps_its_shapes_runs_and_line_breaks(shift):
    from tests.worker.documents.test_pptx_format import shape_of

    source = samples.pptx_bytes()
    prepared = prepare("pptx", source, 300)
    output = prepared.render(adversarial(prepared.units, shift))
    assert shape_of(output) == shape_of(source)


@pytest.mark.parametrize("shift", range(0, len(HOSTILE), 3))
def test_64_an_odt_keeps_every_element(shift):
    from tests.worker.documents.test_odt_format import shape_of

    source = samples.odt_bytes()
    prepared = prepare("odt", source, 300)
    output = prepared.render(adversarial(prepared.units, shift))
    assert shape_of(output) == shape_of(source)


@pytest.mark.parametrize("shift", range(0, len(HOSTILE), 3))
def test_64_an_epub_keeps_every_element_and_every_entry_but_its_text(shift):
    from tests.api.documents.epub_sample import TRANSLATED, epub_bytes
    from tests.worker.documents.test_epub_format import entries, shape_of, texts_of

    source = epub_bytes()
    prepared = prepare("epub", source, 300)
    output = prepared.render(adversarial(prepared.units, shift))
    assert shape_of(output) == shape_of(source)  # every chapter, the nav, the NCX and the OPF parse again
    assert texts_of(output)[1] == texts_of(source)[1]  # code, SVG, authors, page numbers: as they were
    before, after = entries(source), entries(output)
    assert list(after) == list(before) and all(after[n] == before[n] for n in before if n not in TRANSLATED)

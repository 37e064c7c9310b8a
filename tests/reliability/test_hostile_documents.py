"""RELIABILITY 60-63: hostile documents are read in bounded time and memory, or refused with a clear
`document_too_complex`, at the parser. Each case runs in a child process under a CPU-time and address-space
limit (generous: the bounded parsers need a small fraction of it); before the parsers were bounded, each one
ran past it (minutes of CPU, or gigabytes of memory for the .docx bomb). Costs are measured by
`python -m bench.documents_hostile`, not here."""

import json
import resource
import subprocess
import sys

import pytest

from bench import hostile_documents as hostile
from tests.stack import ROOT

pytestmark = pytest.mark.slow  # child processes, and inputs of up to 100 MB unpacked: about a minute
MIB = 1 << 20
CPU_SECONDS = 30
MEMORY = 1536 * MIB

_CHILD = """
import json, sys
from pathlib import Path
import worker.documents.formats
from worker.documents.formats import DocumentError, prepare
DocumentTooComplex = getattr(worker.documents.formats, "DocumentTooComplex", ())  # () catches nothing (older code)
data = Path(sys.argv[2]).read_bytes()
try:
    prepared = prepare(sys.argv[1], data, 300)
    output = prepared.render(prepared.units)
    same = output == (data if isinstance(output, bytes) else data.decode())
    print(json.dumps({"outcome": "read", "units": len(prepared.units), "same": same}))
except DocumentTooComplex as exc:
    print(json.dumps({"outcome": "too_complex", "message": str(exc)}))
except DocumentError as exc:
    print(json.dumps({"outcome": "invalid", "message": str(exc)}))
"""


def parse_bounded(fmt: str, data: bytes, tmp_path) -> dict:
    path = tmp_path / "input"
    path.write_bytes(data)

    def limits():
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    done = subprocess.run(
        [sys.executable, "-c", _CHILD, fmt, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        preexec_fn=limits,
        timeout=CPU_SECONDS * 10,
        check=False,
    )
    assert done.returncode == 0, (
        f"the parser ran past {CPU_SECONDS} s of CPU or {MEMORY >> 20} MiB: {done.stderr[-500:]}"
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "name, fmt, data",
    [
        ("1 MiB of unclosed <!--", "html", hostile.html_unclosed("<!--", MIB)),
        ("1 MiB of unclosed <!", "html", hostile.html_unclosed("<!", MIB)),
        ("1 MiB of unclosed <a", "html", hostile.html_unclosed("<a ", MIB)),
        ("6k inline opens then stray closes", "html", hostile.html_stray_closes(40_000)),
    ],
)
def test_60_html_that_never_closes_is_read_in_one_pass_and_written_back_as_it_was(name, fmt, data, tmp_path):
    got = parse_bounded(fmt, data, tmp_path)
    assert got["outcome"] == "read" and got["same"], got


@pytest.mark.parametrize(
    "name, fmt, data",
    [
        ("1 MiB of inline opens then stray closes", "html", hostile.html_stray_closes(MIB)),
        ("a Markdown table of 30k rows", "markdown", hostile.markdown_table(30_000)),
        ("SubRip with 83k cues", "srt", hostile.srt_cues(90_000 * 38)),
        ("a SubRip tag flood", "srt", hostile.srt_tag_flood(MIB)),
        ("a .docx with 200k runs", "docx", hostile.docx_runs(200_000)),
    ],
)
def test_61_documents_over_the_parts_limit_are_refused_while_read(name, fmt, data, tmp_path):
    got = parse_bounded(fmt, data, tmp_path)
    assert got["outcome"] == "too_complex" and "TRANSQ_MAX_DOCUMENT_PARTS" in got["message"], got


def test_62_a_docx_bomb_is_refused_before_it_is_unpacked(tmp_path):
    bomb = hostile.docx_bomb()  # 100 MB of document.xml in a few hundred KiB
    assert len(bomb) < 512 * 1024
    got = parse_bounded("docx", bomb, tmp_path)
    assert got["outcome"] == "too_complex" and "TRANSQ_DOCX_UNPACKED_RATIO" in got["message"], got


def test_62_a_docx_within_the_limits_is_read(tmp_path):
    got = parse_bounded("docx", hostile.docx_runs(20_000, per_paragraph=100), tmp_path)
    assert got["outcome"] == "read" and got["units"] == 200, got


def test_63_a_zip_that_is_not_a_word_document_is_invalid(tmp_path):
    import io
    import zipfile

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("hello.txt", "你好")
    got = parse_bounded("docx", archive.getvalue(), tmp_path)
    assert got["outcome"] == "invalid" and "word/document.xml" in got["message"], got


@pytest.mark.parametrize("fmt", ["xlsx", "pptx", "odt", "epub"])
def test_62_an_xlsx_pptx_odt_or_epub_bomb_is_refused_before_it_is_unpacked(fmt, tmp_path):
    from tests.worker.documents.test_epub_format import epub_bomb
    from tests.worker.documents.test_odt_format import odt_bomb
    from tests.worker.documents.test_pptx_format import pptx_bomb
    from tests.worker.documents.test_xlsx_format import xlsx_bomb

    bombs = {"xlsx": xlsx_bomb, "pptx": pptx_bomb, "odt": odt_bomb, "epub": epub_bomb}
    bomb = bombs[fmt]()  # ~100 MB of XML in a few hundred KiB
    assert len(bomb) < 1024 * 1024
    got = parse_bounded(fmt, bomb, tmp_path)
    assert got["outcome"] == "too_complex" and "TRANSQ_DOCX_UNPACKED_RATIO" in got["message"], got


def test_63_an_xliff_entity_bomb_is_refused_unexpanded(tmp_path):
    from tests.worker.documents.test_translator_formats import BILLION_LAUGHS

    deep = BILLION_LAUGHS.replace(b"&d;&d;&d;", b"&d;" * 100_000)  # a million entity references' worth
    got = parse_bounded("xliff", deep, tmp_path)  # libxml2 refuses the amplification, else the DOCTYPE is
    assert got["outcome"] == "invalid" and ("DOCTYPE" in got["message"] or "amplification" in got["message"]), got


def test_62_an_epub_chapter_over_the_parts_limit_is_refused_while_read(tmp_path):
    from tests.worker.documents.test_epub_format import epub_bomb

    got = parse_bounded("epub", epub_bomb(2_000_000), tmp_path)  # 200k paragraphs, within the unpacked limit
    assert got["outcome"] == "too_complex" and "TRANSQ_MAX_DOCUMENT_PARTS" in got["message"], got


def test_63_an_epub_entity_bomb_is_refused_unexpanded(tmp_path):
    from tests.api.documents.epub_sample import CHAPTER_1, XHTML11, epub_bytes
    from tests.worker.documents.test_translator_formats import BILLION_LAUGHS

    doctype = BILLION_LAUGHS[BILLION_LAUGHS.index(b"<!DOCTYPE") : BILLION_LAUGHS.index(b"]>") + 2].decode()
    chapter = CHAPTER_1.replace(XHTML11, doctype).replace("见下文", "&d;" * 100_000)
    got = parse_bounded("epub", epub_bytes({"OEBPS/text/ch1.xhtml": chapter}), tmp_path)
    assert got["outcome"] == "invalid" and "declares XML entities" in got["message"], got

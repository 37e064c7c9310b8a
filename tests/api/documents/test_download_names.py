"""The download's file name: cleaned, bounded, with an ASCII fallback for `curl -OJ` (issues 19 and 25)."""

import re

import pytest

from api.documents.download_names import MAX_NAME_CHARS, content_disposition, download_name


@pytest.mark.parametrize(
    "upload, expected",
    [
        ("report.md", "report.en.md"),
        ("报告.md", "报告.en.md"),
        ("\u202egpj.\x00evil\u200b.md", "gpj.evil.en.md"),
        ("../../etc/passwd", "etc passwd.en.md"),
        (None, "job1.en.md"),
    ],
)
def test_names_are_cleaned(upload, expected):
    assert download_name(upload, "job1", ".md", "zh-en-opus") == expected


def test_names_are_bounded_and_keep_their_extension():
    name = download_name("长" * 10_000 + ".html", "job1", ".html", "zh-en-opus")
    assert len(name) == MAX_NAME_CHARS and name.endswith(".en.html")


@pytest.mark.parametrize(
    "name, fallback",
    [("report.en.md", "report.en.md"), ("报告.en.md", "document.en.md"), ("Café.en.docx", "Cafe.en.docx")],
)
def test_the_header_has_an_ascii_fallback_beside_the_utf8_name(name, fallback):
    header = content_disposition(name)
    assert re.fullmatch(r"attachment; filename=\"[ -~]+\"; filename\*=UTF-8''\S+", header)
    assert f'filename="{fallback}"' in header

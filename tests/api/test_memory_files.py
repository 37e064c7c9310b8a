"""Translation memory files as the API reads them (api.memory_files): TMX written by hand after OmegaT's and
Okapi's dialects (tests/api/memory_files/), TSV and CSV pairs, the export read back; and hostile XML (entity
expansion, external entities, a remote DTD) refused before anything is expanded or fetched."""

from pathlib import Path

import pytest

from api.memory_files import format_of, read_memory_file, write_tmx
from shared.errors import PayloadTooLarge, ValidationError

FILES = Path(__file__).parent / "memory_files"


def read(name: str, source: str = "zh", target: str = "en", max_entries: int = 100, max_chars: int = 2000):
    data = (FILES / name).read_bytes()
    return read_memory_file(data, format_of(None, name), source, target, max_entries, max_chars)


def test_omegat_tmx_14_with_its_doctype_props_and_whitespace():
    read_ = read("omegat.tmx")
    assert read_.entries == {
        "今天北京的天气很好。": "The weather in Beijing is fine today.",
        "请在 周五之前 提交报告。": "Please submit the report by Friday.",  # normalised as the cache normalises
        "我们明天上午十点在会议室开会。": "We meet in the conference room at ten tomorrow morning.",
    }
    assert read_.skipped == 0


def test_omegat_tmx_11_lang_attribute_and_region_subtags():
    assert read("omegat_tmx11.tmx").entries == {"谢谢你的帮助！": "Thank you for your help!"}


def test_okapi_inline_codes_are_left_out_and_other_pairs_skipped():
    read_ = read("okapi.tmx")
    assert read_.entries == {"点击保存按钮。": "Click the Save button.", "版本二。": "Version two."}
    assert read_.skipped == 2  # zh -> fr, and a unit without its target


def test_tsv_and_csv_with_header_rows():
    assert read("pairs.tsv").entries == {
        "天气很好。": "The weather is fine.",
        "我们在GitHub上见。": "See you on GitHub.",
    }
    assert read("pairs.csv").entries == {"你好，世界。": "Hello, world.", "早上好。": "Good morning."}


def test_export_reads_back_and_escapes_markup():
    entries = [("a < b & c", 'x "y" <z>'), ("你好。", "Hello.")]
    exported = "".join(write_tmx(entries, "zh", "en", "名字 & <name>")).encode()
    read_ = read_memory_file(exported, "tmx", "zh", "en", 10, 100)
    assert list(read_.entries.items()) == entries


@pytest.mark.parametrize("name", ["billion_laughs.tmx", "external_entity.tmx", "external_dtd_parameter.tmx"])
def test_entities_and_external_references_are_refused(name):
    with pytest.raises(ValidationError, match="entities"):
        read(name)


def test_wrong_pair_malformed_too_many_and_too_long():
    # a TMX goes either way: read as en -> zh it gives the reversed entries
    assert read("omegat.tmx", "en", "zh").entries["The weather in Beijing is fine today."] == "今天北京的天气很好。"
    with pytest.raises(ValidationError, match="no entry of the pair zh-de"):
        read("omegat.tmx", "zh", "de")
    with pytest.raises(ValidationError, match="not well-formed"):
        read_memory_file(b"<tmx><body><tu>", "tmx", "zh", "en", 10, 100)
    with pytest.raises(ValidationError, match="not TMX"):
        read_memory_file(b"<html><body/></html>", "tmx", "zh", "en", 10, 100)
    with pytest.raises(PayloadTooLarge, match="more than 2 entries"):
        read("omegat.tmx", max_entries=2)
    with pytest.raises(ValidationError, match="at most 20 are allowed"):
        read("omegat.tmx", max_chars=20)
    with pytest.raises(ValidationError, match="one column|1 column"):
        read_memory_file("一\n二\n".encode(), "tsv", "zh", "en", 10, 100)
    with pytest.raises(ValidationError, match="control character"):
        read_memory_file("一\x01\tone\n".encode(), "tsv", "zh", "en", 10, 100)
    with pytest.raises(ValidationError, match="not UTF-8"):
        read_memory_file(b"\xff\xfe\t\x00", "csv", "zh", "en", 10, 100)
    with pytest.raises(ValidationError, match="format"):
        format_of(None, "memory.xlsx")

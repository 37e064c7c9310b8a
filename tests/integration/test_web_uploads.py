"""Every file format through the web page's document control, in one headless Chromium session: a .po,
.xliff, .xlsx, .odt, .pptx and .epub uploaded with the page's glossary (内存 = memory), each waited for
and its download link's bytes read back; each file opens with its format's own library and carries the
translation (the glossary's term where its source says 内存; the stack's copy model gives back the rest)."""

import base64
import io
import warnings

import pytest

from tests.api.documents import samples
from tests.api.documents.epub_sample import epub_bytes
from tests.integration.test_web import SCREENSHOTS, browser  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.slow, pytest.mark.browser]
TERM = "memory"


def _po(data: bytes) -> list[str]:
    from tests.api.documents.shapes import po_shape, po_targets

    assert po_shape(data) == po_shape(samples.PO)
    return [text for targets in po_targets(data).values() for text in targets]


def _xliff(data: bytes) -> list[str]:
    from tests.api.documents.shapes import xliff_shape, xliff_targets

    assert xliff_shape(data) == xliff_shape(samples.XLIFF12)
    return [text for _, _, text in xliff_targets(data).values()]


def _xlsx(data: bytes) -> list[str]:
    import openpyxl

    book = openpyxl.load_workbook(io.BytesIO(data))
    assert book["数据"]["A2"].value == 42 and book["数据"]["A3"].value == "=A2*2"
    return [str(cell.value) for sheet in book for row in sheet.iter_rows() for cell in row if cell.value]


def _odt(data: bytes) -> list[str]:
    from odf import teletype, text
    from odf.opendocument import load

    from tests.worker.documents.test_odt_format import shape_of

    assert shape_of(data) == shape_of(samples.odt_bytes())
    return [teletype.extractText(p) for p in load(io.BytesIO(data)).getElementsByType(text.P)]


def _pptx(data: bytes) -> list[str]:
    from tests.worker.documents.test_pptx_format import shape_of, texts_of

    assert shape_of(data) == shape_of(samples.pptx_bytes())
    return texts_of(data)


def _epub(data: bytes, tmp_path) -> list[str]:
    from ebooklib import ITEM_DOCUMENT, epub

    path = tmp_path / "downloaded.epub"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        book = epub.read_epub(str(path))
    assert [idref for idref, _ in book.spine] == ["ch1", "ch2"]
    assert [link.href for link in book.toc] == ["text/ch1.xhtml", "text/chapter%202.xhtml"]
    return [item.get_content().decode() for item in book.get_items_of_type(ITEM_DOCUMENT)]


UPLOADS = [  # (file name, its bytes, the download's name, what its library reads of it)
    ("messages.po", lambda: samples.PO, "messages.en.po", lambda data, tmp: _po(data)),
    ("app.xliff", lambda: samples.XLIFF12, "app.en.xliff", lambda data, tmp: _xliff(data)),
    ("figures.xlsx", samples.xlsx_bytes, "figures.en.xlsx", lambda data, tmp: _xlsx(data)),
    ("letter.odt", samples.odt_bytes, "letter.en.odt", lambda data, tmp: _odt(data)),
    ("slides.pptx", samples.pptx_bytes, "slides.en.pptx", lambda data, tmp: _pptx(data)),
    ("book.epub", epub_bytes, "book.en.epub", _epub),
]


def _wait_for(driver, name: str, downloaded_as: str, timeout: float = 120) -> None:
    """Until the page offers `downloaded_as` for download, or says the upload failed."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def done(d) -> bool:  # type: ignore[no-untyped-def]
        link = d.find_element(By.ID, "download")
        offered = link.get_attribute("download") == downloaded_as and link.is_displayed()
        return offered or "failed" in d.find_element(By.ID, "status").text

    try:
        WebDriverWait(driver, timeout).until(done)
    except Exception:
        status = driver.find_element(By.ID, "status").text
        offered = driver.find_element(By.ID, "download").get_attribute("download")
        raise AssertionError(f"{name}: the page says {status!r} and offers {offered!r}") from None


def test_every_file_format_uploads_and_downloads_through_the_page(stack, browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.set_window_size(1200, 800)
    browser.get(stack.api.url + "/")
    picker = browser.find_element(By.ID, "file")
    accepted = picker.get_attribute("accept").split(",")
    assert {".po", ".xliff", ".xlsx", ".odt", ".pptx", ".epub"} <= set(accepted), accepted
    browser.find_element(By.ID, "glossary-box").click()
    browser.find_element(By.ID, "glossary").send_keys("内存 = " + TERM)
    browser.execute_script("arguments[0].style.display = 'block';", picker)  # a real user clicks its label
    for name, make, downloaded_as, read in UPLOADS:
        path = tmp_path / name
        path.write_bytes(make())
        picker.send_keys(str(path))
        _wait_for(browser, name, downloaded_as)
        status = browser.find_element(By.ID, "status").text
        assert status.startswith("succeeded"), (name, status)
        assert browser.find_element(By.ID, "source").get_attribute("value") == f"({name})"
        data = base64.b64decode(
            browser.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "fetch(document.getElementById('download').href).then(r => r.blob()).then(b => {"
                "  const reader = new FileReader(); reader.onload = () => done(reader.result.split(',')[1]);"
                "  reader.readAsDataURL(b); });"
            )
        )
        texts = read(data, tmp_path)
        assert any(TERM in text for text in texts), (name, texts)
        assert not any("内存" in text for text in texts if TERM in text), (name, texts)
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "web-page-epub.png"))

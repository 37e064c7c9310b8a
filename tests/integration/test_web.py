"""The web page in a real browser: type Chinese, click Translate, read the result."""

import shutil
import tempfile

import pytest
import requests

from tests.stack import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
SCREENSHOTS = ROOT / ".artifacts"  # written by the test, for a human to look at (git-ignored)


@pytest.fixture
def browser():
    if not CHROMIUM or not CHROMEDRIVER:
        pytest.skip(
            "Debian's chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
        )
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="transq-chromium-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def test_translate_a_paragraph_in_the_browser(stack, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(1200, 800)
    browser.get(stack.api.url + "/")
    assert browser.find_element(By.ID, "source").is_displayed() and browser.find_element(By.ID, "target").is_displayed()
    icon = browser.find_element(By.CSS_SELECTOR, "link[rel=icon]").get_attribute("href")
    assert requests.get(icon, timeout=5).status_code == 200
    # The pair selector is filled from GET /v1/languages, with a "detect" choice for each target.
    WebDriverWait(browser, 10).until(
        lambda d: (
            [o.get_attribute("value") for o in d.find_elements(By.CSS_SELECTOR, "#pair option")] == ["zh-en", "auto-en"]
        )
    )
    browser.find_element(By.ID, "source").send_keys("浏览器里的第一段。第二句！\n\n第二段。")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    result = browser.find_element(By.ID, "target").get_attribute("value")
    assert result.strip() and "\n\n" in result  # the paragraph break survived
    assert "3/3 sentences" in browser.find_element(By.ID, "status").text

    # The same text again comes from the cache, and the page says so.
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 30).until(lambda d: "3 from cache" in d.find_element(By.ID, "status").text)

    # Copy puts the translation on the clipboard (or the selection, without clipboard permission).
    browser.find_element(By.ID, "copy").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "status").text == "copied")

    # Ctrl+Enter translates new text; the progress bar starts again from nothing.
    source = browser.find_element(By.ID, "source")
    source.clear()
    source.send_keys("快捷键翻译的一句话。")
    source.send_keys(Keys.CONTROL, Keys.ENTER)
    WebDriverWait(browser, 60).until(lambda d: "1/1 sentences, 0 from cache" in d.find_element(By.ID, "status").text)

    # Errors are shown in words, and reset the progress bar.
    browser.find_element(By.ID, "source").clear()
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 10).until(lambda d: "Type some text" in d.find_element(By.ID, "status").text)
    assert browser.find_element(By.ID, "progress").get_attribute("hidden") is not None

    # Side by side on a wide window, stacked below 700 px; a screenshot of each for a human to look at.
    browser.find_element(By.ID, "source").send_keys("左边是中文。")
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "web-page-wide.png"))
    wide = [browser.find_element(By.ID, i).location for i in ("source", "target")]
    assert wide[0]["y"] == wide[1]["y"] and wide[0]["x"] < wide[1]["x"]
    browser.set_window_size(600, 900)
    narrow = [browser.find_element(By.ID, i).location for i in ("source", "target")]
    assert narrow[0]["x"] == narrow[1]["x"] and narrow[0]["y"] < narrow[1]["y"]
    browser.save_screenshot(str(SCREENSHOTS / "web-page-narrow.png"))


def test_cancel_from_the_page(make_stack, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    s = make_stack(worker=False)  # the job waits: there is time to cancel it
    browser.get(s.api.url + "/")
    browser.find_element(By.ID, "source").send_keys("取消这一句。")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "cancel").is_displayed())
    browser.find_element(By.ID, "cancel").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "status").text == "cancelled")
    WebDriverWait(browser, 10).until(lambda d: not d.find_element(By.ID, "cancel").is_displayed())
    job_ids = [k.split(":")[-1] for k in s.r.keys("transq:job:*")]
    assert [s.client.job(j)["status"] for j in job_ids] == ["cancelled"]


def test_upload_a_document_and_download_its_translation(stack, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.api.documents import samples
    from tests.api.documents.shapes import markdown_shape

    source = tmp_path / "notes.md"
    source.write_text(samples.MARKDOWN, encoding="utf-8")
    browser.set_window_size(1200, 800)
    browser.get(stack.api.url + "/")
    picker = browser.find_element(By.ID, "file")
    browser.execute_script("arguments[0].style.display = 'block';", picker)  # a real user clicks its label
    picker.send_keys(str(source))
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    assert browser.find_element(By.ID, "source").get_attribute("value") == samples.MARKDOWN
    translated = browser.find_element(By.ID, "target").get_attribute("value")
    assert markdown_shape(translated) == markdown_shape(samples.MARKDOWN)
    link = browser.find_element(By.ID, "download")
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "download").is_displayed())
    assert link.get_attribute("download") == "notes.en.md" and link.get_attribute("href").startswith("blob:")
    downloaded = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(document.getElementById('download').href).then(r => r.text()).then(done);"
    )
    assert downloaded == translated
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "web-page-document.png"))


def test_detect_the_source_language_in_the_browser(stack, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(stack.api.url + "/")
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#pair option[value='auto-en']"))
    Select(browser.find_element(By.ID, "pair")).select_by_value("auto-en")
    browser.find_element(By.ID, "source").send_keys("自动识别这句话的语言。")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    assert browser.find_element(By.ID, "detected").text == "detected: zh (confidence 1.00)"
    assert browser.find_element(By.ID, "target").get_attribute("value").strip()

    # A language no served pair translates is refused on the page, naming what was detected; no job.
    jobs = len(stack.r.keys("transq:job:*"))
    source = browser.find_element(By.ID, "source")
    source.clear()
    source.send_keys("Pouvez-vous traduire ce document en anglais ?")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 10).until(lambda d: "no served pair" in d.find_element(By.ID, "status").text)
    assert browser.find_element(By.ID, "status").text == "detected fr: no served pair translates it to en"
    assert browser.find_element(By.ID, "detected").text.startswith("detected: fr (confidence 0.")
    assert len(stack.r.keys("transq:job:*")) == jobs


def test_scores_flag_a_low_confidence_translation(make_stack, browser):
    """With "Scores" ticked the page asks for scores and shows the job's confidence; a threshold every
    sentence of the copy model is under (its scores are all just below 0) flags it as low."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    s = make_stack(low_confidence=0.0)
    browser.get(s.api.url + "/")
    browser.find_element(By.ID, "source").send_keys("没有勾选分数。")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    assert not browser.find_element(By.ID, "confidence").is_displayed()  # not asked: nothing shown

    browser.find_element(By.ID, "scores").click()
    browser.find_element(By.ID, "source").clear()
    browser.find_element(By.ID, "source").send_keys("勾选了分数。第二句！")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    marker = browser.find_element(By.ID, "confidence")
    assert marker.is_displayed() and marker.get_attribute("class") == "low"
    assert marker.text.startswith("⚠ low confidence: 2 sentence(s) under 0")
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "web-page-scores.png"))


def test_the_page_at_390_px_wraps_its_header_and_clears_a_stale_error(stack, browser):
    """A phone-sized window: the header wraps (the detected language and its confidence stay on screen,
    nothing scrolls sideways); the "type some text" error goes once there is text."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.set_window_size(390, 844)
    browser.get(stack.api.url + "/")
    WebDriverWait(browser, 10).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#pair option")) == 2)
    browser.find_element(By.ID, "translate").click()
    status = browser.find_element(By.ID, "status")
    assert status.text == "Type some text to translate first."
    browser.find_element(By.ID, "source").send_keys("手机上的一句话。")
    WebDriverWait(browser, 5).until(lambda d: d.find_element(By.ID, "status").text == "")

    Select(browser.find_element(By.ID, "pair")).select_by_value("auto-en")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    detected = browser.find_element(By.ID, "detected")
    assert detected.text.startswith("detected: zh (confidence")
    width = browser.execute_script("return window.innerWidth")
    right = browser.execute_script("return arguments[0].getBoundingClientRect().right", detected)
    assert right <= width, f"the detected language ends at {right}px in a {width}px window"
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "page-390px.png"))


def test_the_page_shows_each_sentence_as_it_arrives(make_stack, browser):
    """Without an API key, the page follows the job's events (read with fetch, as with a key: see
    test_web_features.py): a sentence shows in its
    place while the others are still "…", then the whole translation."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.reliability.conftest import slow_text

    s = make_stack(test_hooks=True, max_batch_sentences=1)  # one sentence per batch, each a second long
    browser.set_window_size(1200, 800)
    browser.get(s.api.url + "/")
    browser.find_element(By.ID, "source").send_keys("".join(slow_text(1, f"第{i}句") for i in range(5)))
    browser.find_element(By.ID, "translate").click()

    def partly(d):
        shown = d.find_element(By.ID, "target").get_attribute("value")
        arrived = int(d.find_element(By.ID, "target").get_attribute("data-arrived") or 0)
        return 0 < arrived < 5 and "…" in shown and d.find_element(By.ID, "status").text.startswith("running")

    WebDriverWait(browser, 60, poll_frequency=0.05).until(partly)
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "web-page-streaming.png"))
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    result = browser.find_element(By.ID, "target").get_attribute("value")
    assert result.strip() and "…" not in result and "5/5 sentences" in browser.find_element(By.ID, "status").text

"""The web page in a real browser: type Chinese, click Translate, read the result."""

import shutil
import tempfile

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


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
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(stack.api.url + "/")
    assert browser.find_element(By.ID, "source").is_displayed() and browser.find_element(By.ID, "target").is_displayed()
    # The pair selector is filled from GET /v1/languages.
    WebDriverWait(browser, 10).until(
        lambda d: [o.get_attribute("value") for o in d.find_elements(By.CSS_SELECTOR, "#pair option")] == ["zh-en"]
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

    # Errors are shown in words.
    browser.find_element(By.ID, "source").clear()
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 10).until(lambda d: "Type some text" in d.find_element(By.ID, "status").text)

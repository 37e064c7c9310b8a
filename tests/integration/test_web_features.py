"""The web page with API keys on, in headless Chromium: it streams a job's sentences (fetch with the key, not
EventSource), marks what the fidelity check flagged, and answers from a translation memory picked in its menu.
The stack's worker has the copy model (its outputs copy its input), so Chinese left in an English translation is
flagged `untranslated`, and English text is not."""

import pytest
import requests

from tests.conftest import Stack
from tests.integration.test_web import SCREENSHOTS, browser  # noqa: F401 (the fixture)
from tests.reliability.conftest import slow_text

pytestmark = [pytest.mark.slow, pytest.mark.browser]
KEY = "web-page-key-SECRET"
OTHER = "another-tenant-key-SECRET"


@pytest.fixture(scope="module")
def stack(tmp_path_factory, model_dir):
    """API keys on; one sentence per batch and the test hooks (a sentence can take a second); whole sentences;
    an event stream ends after a second (the page reconnects with Last-Event-ID)."""
    s = Stack(
        tmp_path_factory.mktemp("web-keys-stack"),
        model_dir,
        api_keys=f"{KEY},{OTHER}",
        test_hooks=True,
        max_batch_sentences=1,
        max_new_tokens=64,
        event_stream_seconds=1,
    )
    try:
        yield s.start()
    finally:
        s.close()


def open_page(stack, driver, width=1200, height=800):
    from selenium.webdriver.common.by import By

    driver.set_window_size(width, height)
    driver.get(stack.api.url + "/")
    driver.find_element(By.ID, "api-key").send_keys(KEY)


def translate(driver, text, timeout=60):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    source = driver.find_element(By.ID, "source")
    source.clear()
    source.send_keys(text)
    driver.find_element(By.ID, "translate").click()
    WebDriverWait(driver, timeout).until(
        lambda d: d.find_element(By.ID, "status").text.startswith(("succeeded", "failed"))
    )
    return driver.find_element(By.ID, "status").text


def test_the_page_streams_sentences_with_an_api_key(stack, browser):  # noqa: F811
    """With a key typed, a sentence shows in its place while the others are still "…" (it is not polling:
    the job's progress would show no sentence before the job's end); the stream, cut after a second, is read
    again from after the last event's id (Last-Event-ID), each request with the key."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    open_page(stack, browser)
    browser.execute_script(  # record what each request for the events sent (the page's own fetch does the rest)
        "window.asked = []; const original = window.fetch;"
        "window.fetch = (url, init) => { if (String(url).endsWith('/events')) window.asked.push(init.headers);"
        "  return original(url, init); };"
    )
    browser.find_element(By.ID, "source").send_keys("".join(slow_text(1, f"第{i}句") for i in range(5)))
    browser.find_element(By.ID, "translate").click()

    def partly(d):
        shown = d.find_element(By.ID, "target").get_attribute("value")
        arrived = int(d.find_element(By.ID, "target").get_attribute("data-arrived") or 0)
        return 0 < arrived < 5 and "…" in shown and d.find_element(By.ID, "status").text.startswith("running")

    WebDriverWait(browser, 60, poll_frequency=0.05).until(partly)
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "web-page-streaming-with-key.png"))
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    result = browser.find_element(By.ID, "target").get_attribute("value")
    assert "…" not in result and "5/5 sentences" in browser.find_element(By.ID, "status").text
    assert browser.find_element(By.ID, "target").get_attribute("data-arrived") == "5"
    asked = browser.execute_script("return window.asked")
    assert len(asked) >= 2, asked  # the five seconds of sentences took more than one stream
    assert all(h["Authorization"] == f"Bearer {KEY}" for h in asked)
    assert "Last-Event-ID" not in asked[0] and all(h["Last-Event-ID"] for h in asked[1:]), asked


def test_the_event_parser_reads_split_chunks_comments_and_multiline_data(stack, browser):  # noqa: F811
    """The page's SSE parser (events.js) against the spec's corner cases, fed in arbitrary chunks."""
    open_page(stack, browser)
    events = browser.execute_script(
        "const seen = [];"
        "const p = window.transqEvents.parser((e) => seen.push(e));"
        "for (const chunk of ['retry: 2000\\n\\n: heartbeat\\n\\nid: 1-0\\nev', 'ent: sentence\\r\\ndata: {\"a\":',"
        "  '1}\\n\\nid: 2-0\\ndata: line one\\ndata:line two\\n', '\\nevent: x\\n']) p.feed(chunk);"
        "return [seen, p.retry()];"
    )
    assert events == [
        [
            {"id": "1-0", "event": "sentence", "data": '{"a":1}'},
            {"id": "2-0", "event": "message", "data": "line one\nline two"},
        ],
        2000,
    ]


def test_the_page_marks_flagged_sentences_and_sums_up_the_check(stack, browser):  # noqa: F811
    """English text through the copy model: nothing flagged, no marker. Chinese left in the English
    translation: each sentence marked ⚑ with `untranslated` in its title, and the status line says so."""
    from selenium.webdriver.common.by import By

    open_page(stack, browser)
    status = translate(browser, "Version 2.1 ships on 2026-01-02. See https://example.com/dl today.")
    assert status.startswith("succeeded") and "0 flagged" in status and "spans " in status, status
    assert "2 kept" in status or "3 kept" in status, status
    assert not browser.find_element(By.ID, "flags").is_displayed()
    assert browser.find_elements(By.CSS_SELECTOR, "#flags li") == []

    status = translate(browser, "我有3个苹果。谢谢！")
    assert "2 flagged (untranslated 2)" in status, status
    marks = browser.find_elements(By.CSS_SELECTOR, "#flags li")
    assert [m.get_attribute("data-flags") for m in marks] == ["untranslated", "untranslated"]
    assert "untranslated: text in the source's script was left in" in marks[0].get_attribute("title")
    assert marks[0].text.startswith("⚑ 1 · untranslated") and "苹果" in marks[0].text
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "web-page-flags.png"))

    # At 390 px the markers wrap: nothing scrolls sideways.
    browser.set_window_size(390, 844)
    width = browser.execute_script("return window.innerWidth")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    right = browser.execute_script("return arguments[0].getBoundingClientRect().right", marks[0])
    assert right <= width
    browser.save_screenshot(str(SCREENSHOTS / "web-page-flags-390px.png"))


def test_markup_in_a_translation_stays_text(stack, browser):  # noqa: F811
    """Hostile: a translation holding `<img onerror>` (the copy model gives it back, flagged) is shown as text
    in the translation, the marker and the status line; no element is made of it and nothing runs."""
    from selenium.webdriver.common.by import By

    open_page(stack, browser)
    hostile = '<img src=x onerror="window.pwned=1">中文<b>粗</b>。'
    status = translate(browser, hostile)
    assert status.startswith("succeeded"), status
    marks = browser.find_elements(By.CSS_SELECTOR, "#flags li")
    assert marks and "<img" in marks[0].text
    assert browser.find_elements(By.CSS_SELECTOR, "#flags img, #flags b, #status img, footer img") == []
    assert "<img" in browser.find_element(By.ID, "target").get_attribute("value")
    assert browser.execute_script("return window.pwned === undefined")


def test_the_memory_menu_answers_from_a_memory(stack, browser, tmp_path):  # noqa: F811
    """A memory imported through the API (TSV) is in the menu of its key (not another key's); picked, a
    sentence it holds comes back as its translation, and the status line says "1 from memory"."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    tsv = "source\ttarget\n浏览器里的记忆。\tThe memory in the browser.\n"
    created = requests.post(
        stack.api.url + "/v1/memories",
        headers={"Authorization": f"Bearer {KEY}"},
        files={"file": ("browser.tsv", tsv.encode())},
        data={"source_lang": "zh", "target_lang": "en", "name": "browser"},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    memory_id = created.json()["id"]
    theirs = requests.post(
        stack.api.url + "/v1/memories",
        headers={"Authorization": f"Bearer {OTHER}"},
        files={"file": ("theirs.tsv", tsv.encode())},
        data={"source_lang": "zh", "target_lang": "en", "name": "theirs"},
        timeout=30,
    )
    assert theirs.status_code == 201, theirs.text

    open_page(stack, browser)
    menu = browser.find_element(By.ID, "memory")
    menu.click()  # focus reads this key's memories
    WebDriverWait(browser, 10).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#memory option")) == 2)
    options = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#memory option")]
    assert options == ["", memory_id]  # the other key's memory is not offered
    Select(menu).select_by_value(memory_id)

    status = translate(browser, "浏览器里的记忆。")
    assert status.startswith("succeeded") and "1 from memory" in status, status
    assert browser.find_element(By.ID, "target").get_attribute("value") == "The memory in the browser."
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "web-page-memory.png"))


def test_the_page_marks_what_the_quality_gate_flagged(make_stack, browser):  # noqa: F811
    """Keys off (the same fetch stream, no key), and a server-wide gate above any score the copy model gives:
    an English sentence is retried with a wider beam, still low, and marked `low_confidence`."""
    from selenium.webdriver.common.by import By

    s = make_stack(min_confidence=-1e-9, max_new_tokens=64)
    browser.set_window_size(1200, 800)
    browser.get(s.api.url + "/")
    status = translate(browser, "The gate is strict today.")
    assert "1 flagged (low_confidence 1)" in status and "gate: 1 retried, 0 withheld" in status, status
    marks = browser.find_elements(By.CSS_SELECTOR, "#flags li")
    assert [m.get_attribute("data-flags") for m in marks] == ["low_confidence"]
    assert "under the job's min_confidence" in marks[0].get_attribute("title")
    assert marks[0].text == "⚑ 1 · low_confidence The gate is strict today."

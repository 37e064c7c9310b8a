"""Glossaries end to end, as a user uses them: POST /v1/jobs and /v1/translate with `glossary` or a stored
`glossary_id` through a real stack (gunicorn, Redis, a Celery worker with the shipped copy model, whose outputs
copy their input, so each substitution shows), the sentence cache kept apart, and the web page's glossary box."""

import json
import subprocess
import sys

import pytest
import requests

from tests.conftest import Stack
from tests.integration.test_web import browser  # noqa: F401 - the headless Chromium fixture
from tests.stack import ROOT

pytestmark = pytest.mark.slow

SENTENCE = "今天北京的天气很好。"
GLOSSARY = {"北京": "Beijing", "天气": "weather", "GitHub": "GitHub"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory, model_dir):
    """A stack whose worker writes whole sentences (the shared one stops at 8 tokens)."""
    s = Stack(tmp_path_factory.mktemp("glossary-stack"), model_dir, max_new_tokens=64)
    try:
        yield s.start()
    finally:
        s.close()


def post(stack, body, path="/v1/jobs"):
    response = requests.post(stack.api.url + path, json=body, timeout=30)
    assert response.status_code in (200, 202), response.text
    job = response.json()
    return job if job.get("status") == "succeeded" else stack.wait_status(job["id"], ("succeeded", "failed"))


def test_terms_appear_verbatim_and_the_cache_keeps_plain_and_glossary_translations_apart(stack):
    texts = [SENTENCE, "谢谢你的帮助！", "我们在GitHub上见。"]
    assert post(stack, {"texts": texts})["result"]["translations"] == texts  # the copy model, no glossary
    first = post(stack, {"texts": texts, "glossary": GLOSSARY})
    assert first["result"]["translations"] == ["今天Beijing的weather很好。", "谢谢你的帮助！", "我们在GitHub上见。"]
    assert first["cached_sentences"] == 1  # the sentence no term matches: from the plain cache
    again = requests.post(stack.api.url + "/v1/jobs", json={"text": SENTENCE, "glossary": GLOSSARY}, timeout=30)
    assert again.status_code == 200 and again.json()["cached_sentences"] == 1  # the glossary's own cache entry
    assert again.json()["result"]["translations"] == ["今天Beijing的weather很好。"]
    other = post(stack, {"text": SENTENCE, "glossary": {"北京": "Peking"}})  # another glossary: another entry
    assert other["result"]["translations"] == ["今天Peking的天气很好。"] and other["cached_sentences"] == 0
    assert post(stack, {"text": SENTENCE})["result"]["translations"] == [SENTENCE]  # plain is still plain


def test_a_stored_glossary_by_id_with_request_terms_on_top(stack):
    stored = requests.post(
        stack.api.url + "/v1/glossaries", json={"name": "城市", "terms": {"北京": "Peking", "上海": "Shanghai"}}
    ).json()
    body = {"text": "从北京到上海。", "glossary_id": stored["id"], "glossary": {"北京": "Beijing"}, "timeout": 20}
    waited = requests.post(stack.api.url + "/v1/translate", json=body, timeout=30)
    assert waited.status_code == 200 and waited.json()["translations"] == ["从Beijing到Shanghai。"]
    missing = requests.post(stack.api.url + "/v1/jobs", json={"text": "你好。", "glossary_id": "0" * 32}, timeout=5)
    assert missing.status_code == 404 and "glossary_id" in missing.json()["error"]["message"]
    bad = requests.post(stack.api.url + "/v1/jobs", json={"text": "你好。", "glossary": {"北京": ""}}, timeout=5)
    assert bad.status_code == 422 and 'glossary["北京"] is empty' in bad.json()["error"]["message"]


def upload(stack, page: str, **fields) -> requests.Response:
    files = {"file": ("page.html", page.encode())}
    return requests.post(stack.api.url + "/v1/documents", files=files, data=fields, timeout=10)


def test_a_document_upload_with_a_glossary_and_a_stored_one(stack):
    """The form's `glossary` (JSON text) and `glossary_id`; the document stage answers a repeat from the
    glossary's own cache entries, and the same document without the glossary is still translated plainly."""
    stored = requests.post(stack.api.url + "/v1/glossaries", json={"terms": {"帮助": "help"}}, timeout=5).json()
    page = "<html><body><p>文档里北京的天气。</p><p>谢谢文档的帮助！</p></body></html>"
    expected = "<html><body><p>文档里Beijing的weather。</p><p>谢谢文档的help！</p></body></html>"
    terms = json.dumps(GLOSSARY, ensure_ascii=False)
    for cached in (0, 2):  # the second time, every sentence is in the glossary's cache entries
        job = stack.client.wait(upload(stack, page, glossary=terms, glossary_id=stored["id"]).json()["id"], 60)
        assert job["status"] == "succeeded" and job["cached_sentences"] == cached, job
        assert job["result"]["translations"] == [expected]
    plain = stack.client.wait(upload(stack, page).json()["id"], 60)
    assert plain["result"]["translations"] == [page] and plain["cached_sentences"] == 0
    json_job = post(stack, {"texts": ["# 北京\n"], "format": "markdown", "glossary": GLOSSARY})
    assert json_job["result"]["translations"] == ["# Beijing\n"]

    not_json = upload(stack, page, glossary="北京=Beijing")
    assert not_json.status_code == 422 and "glossary must be a JSON object" in not_json.json()["error"]["message"]
    unknown = upload(stack, page, glossary_id="0" * 32)
    assert unknown.status_code == 404 and "glossary_id" in unknown.json()["error"]["message"]


def test_the_cli_takes_a_glossary_file(stack, tmp_path):
    """`transq translate FILE --glossary TERMS`: lines as the web page takes them, or a JSON object; a text
    file goes by paragraphs, a document as a document; a bad glossary file is an error naming its line."""
    terms = tmp_path / "terms.txt"
    terms.write_text("# 城市\n北京 = Beijing\nGitHub\n", encoding="utf-8")
    as_json = tmp_path / "terms.json"
    as_json.write_text(json.dumps({"北京": "Peking"}, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "trip.txt").write_text("北京见。\n\nGitHub见。", encoding="utf-8")
    (tmp_path / "trip.md").write_text("# 北京\n", encoding="utf-8")

    def cli(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "transq_cli.main", "translate", *args, "--url", stack.api.url]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)

    assert cli(str(tmp_path / "trip.txt"), "--glossary", str(terms)).stdout == "Beijing见。\n\nGitHub见。"
    assert cli(str(tmp_path / "trip.md"), "--glossary", str(as_json)).stdout == "# Peking\n"
    terms.write_text("北京 =\n", encoding="utf-8")
    failed = cli(str(tmp_path / "trip.txt"), "--glossary", str(terms))
    assert failed.returncode == 1 and "terms.txt line 1: write `source = target`" in failed.stderr


def test_paste_a_glossary_in_the_web_page(stack, browser):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(1200, 800)
    browser.get(stack.api.url + "/")
    assert not browser.find_element(By.ID, "glossary").is_displayed()  # folded until asked for
    browser.find_element(By.CSS_SELECTOR, "#glossary-box summary").click()
    browser.find_element(By.ID, "glossary").send_keys("# 城市\n北京 = Beijing\n\nGitHub\n")
    browser.find_element(By.ID, "source").send_keys("北京见，GitHub见。")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    assert browser.find_element(By.ID, "target").get_attribute("value") == "Beijing见，GitHub见。"
    assert browser.find_element(By.ID, "glossary-count").text == "(2 terms)"
    browser.find_element(By.ID, "glossary").send_keys("上海 =\n")
    browser.find_element(By.ID, "translate").click()
    WebDriverWait(browser, 10).until(lambda d: "glossary line 5" in d.find_element(By.ID, "status").text)


def test_upload_a_document_with_a_detected_language_and_a_glossary_in_the_web_page(stack, browser, tmp_path):  # noqa: F811
    """The page sends a file with "detect language", its glossary (as JSON text) and the scores box: the
    document stage detects the language, and the page shows it, the glossary's terms and the confidence."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    source = tmp_path / "trip.md"
    source.write_text("# 北京之行\n\n北京的天气很好。\n", encoding="utf-8")
    browser.set_window_size(1200, 800)
    browser.get(stack.api.url + "/")
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#pair option[value='auto-en']"))
    Select(browser.find_element(By.ID, "pair")).select_by_value("auto-en")
    browser.find_element(By.CSS_SELECTOR, "#glossary-box summary").click()
    browser.find_element(By.ID, "glossary").send_keys("北京 = Beijing\n")
    browser.find_element(By.ID, "scores").click()
    picker = browser.find_element(By.ID, "file")
    browser.execute_script("arguments[0].style.display = 'block';", picker)  # a real user clicks its label
    picker.send_keys(str(source))
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "status").text.startswith("succeeded"))
    assert browser.find_element(By.ID, "target").get_attribute("value") == "# Beijing之行\n\nBeijing的天气很好。\n"
    assert browser.find_element(By.ID, "detected").text == "detected: zh (confidence 1.00)"
    assert browser.find_element(By.ID, "confidence").is_displayed()

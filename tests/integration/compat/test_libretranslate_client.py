"""`libretranslatepy`, LibreTranslate's API docs' request shapes, and deep-translator's LibreTranslator (a real
integration, installed from PyPI), each pointed at a real stack: answered as LibreTranslate answers."""

import io
from urllib.error import HTTPError

import pytest
import requests
from deep_translator import LibreTranslator
from libretranslatepy import LibreTranslateAPI

from tests.integration.compat.conftest import GOOD, POOR, PUBLIC_URL, native_translation

pytestmark = pytest.mark.slow


def test_libretranslatepy_translate_detect_languages(compat_stack):
    api = LibreTranslateAPI(compat_stack.api.url, api_key=GOOD)
    assert api.translate("你好", "zh", "en") == native_translation(compat_stack, "你好")
    assert api.translate("谢谢", "auto", "en") == native_translation(compat_stack, "谢谢")
    detected = api.detect("今天天气很好，我们去公园散步吧。")
    assert detected[0]["language"] == "zh" and 0 < detected[0]["confidence"] <= 100
    languages = api.languages()
    assert {entry["code"]: entry["targets"] for entry in languages} == {"en": [], "zh": ["en"]}
    assert {entry["code"]: entry["name"] for entry in languages} == {"en": "English", "zh": "Chinese"}


def test_libretranslatepy_with_a_bad_key_gets_403(compat_stack):
    with pytest.raises(HTTPError) as raised:
        LibreTranslateAPI(compat_stack.api.url, api_key="wrong").translate("你好", "zh", "en")
    assert raised.value.code == 403


def post(stack, path, **kwargs):
    return requests.post(stack.api.url + path, timeout=40, **kwargs)


def test_the_api_docs_request_shapes(compat_stack):
    """JSON bodies as LibreTranslate's docs show them: a list `q`, `auto` with detectedLanguage, html, alternatives."""
    texts = ["你好", "谢谢"]
    many = post(
        compat_stack,
        "/translate",
        json={"q": texts, "source": "auto", "target": "en", "api_key": GOOD, "alternatives": 2},
    )
    assert many.status_code == 200, many.text
    body = many.json()
    assert body["translatedText"] == [native_translation(compat_stack, t) for t in texts]
    assert [d["language"] for d in body["detectedLanguage"]] == ["zh", "zh"]
    assert body["alternatives"] == [[], []]
    html = post(
        compat_stack,
        "/translate",
        json={"q": "<b>你好</b>", "source": "zh", "target": "en", "format": "html", "api_key": GOOD},
    )
    assert html.json() == {"translatedText": f"<b>{native_translation(compat_stack, '你好')}</b>"}
    settings = requests.get(compat_stack.api.url + "/frontend/settings", timeout=10).json()
    assert settings["keyRequired"] is True and ".docx" in settings["supportedFilesFormat"]


def test_errors_in_libretranslates_shape(compat_stack):
    cases = [
        ({"source": "zh", "target": "en", "api_key": GOOD}, 400, "q"),
        ({"q": "你好", "source": "zh", "api_key": GOOD}, 400, "target"),
        ({"q": "你好", "source": "zh", "target": "fr", "api_key": GOOD}, 400, ""),
        ({"q": "你好", "source": "zh", "target": "en", "format": "pdf", "api_key": GOOD}, 400, "format"),
        ({"q": "你好", "source": "zh", "target": "en"}, 403, ""),
        ({"q": "你好" * 11, "source": "zh", "target": "en", "api_key": POOR}, 429, ""),
    ]
    for body, status, named in cases:
        answer = post(compat_stack, "/translate", json=body)
        assert answer.status_code == status, (body, answer.text)
        assert set(answer.json()) == {"error"} and named in answer.json()["error"]
    huge = {"q": "你" * 400_000, "source": "zh", "target": "en", "api_key": GOOD}
    too_large = post(compat_stack, "/translate", data=huge)  # over TRANSQ_MAX_BODY_BYTES: LibreTranslate's 400
    assert too_large.status_code == 400 and "limit" in too_large.json()["error"]


def test_translate_file_and_download(compat_stack):
    answer = post(
        compat_stack,
        "/translate_file",
        files={"file": ("notes.txt", io.BytesIO("你好\n".encode()))},
        data={"source": "zh", "target": "en", "api_key": GOOD},
    )
    assert answer.status_code == 200, answer.text
    public = answer.json()["translatedFileUrl"]
    # TRANSQ_PUBLIC_URL, not the request's Host header (which the client chooses): the proxy's address
    assert public.startswith(PUBLIC_URL + "/download_file/"), public
    url = compat_stack.api.url + public.removeprefix(PUBLIC_URL)
    downloaded = requests.get(url, timeout=10)
    assert downloaded.status_code == 200
    assert downloaded.content.decode() == native_translation(compat_stack, "你好") + "\n"
    forged = url.rsplit("/", 2)
    assert requests.get(f"{forged[0]}/{'0' * 64}/{forged[2]}", timeout=10).status_code == 404
    spoofed = post(
        compat_stack,
        "/translate_file",
        files={"file": ("notes.txt", io.BytesIO("你好\n".encode()))},
        data={"source": "zh", "target": "en", "api_key": GOOD},
        headers={"Host": "evil.example"},
    )
    assert spoofed.status_code == 200 and spoofed.json()["translatedFileUrl"].startswith(PUBLIC_URL + "/"), spoofed.text


def test_deep_translator_libretranslator(compat_stack):
    """deep-translator's LibreTranslator with a custom URL: a real integration speaking LibreTranslate's API."""
    translator = LibreTranslator(source="zh", target="en", api_key=GOOD, custom_url=compat_stack.api.url + "/")
    assert translator.translate("你好") == native_translation(compat_stack, "你好")

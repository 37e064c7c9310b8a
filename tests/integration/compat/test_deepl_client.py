"""The official `deepl` client, pointed at a real stack (API, Redis, document stage, worker with the offline
copy model) with `server_url`: every call it makes is answered as DeepL's API answers it."""

import io

import deepl
import pytest
import requests

from tests.api.documents import samples
from tests.api.documents.shapes import docx_shape, html_shape
from tests.integration.compat.conftest import GOOD, POOR, native_translation

pytestmark = pytest.mark.slow

TEXTS = ["你好", "谢谢"]


@pytest.fixture
def translator(compat_stack):
    client = deepl.Translator(GOOD, server_url=compat_stack.api.url)
    yield client
    client.close()


def test_translate_text_one_and_many(compat_stack, translator):
    one = translator.translate_text(TEXTS[0], target_lang="EN-US")
    assert one.text == native_translation(compat_stack, TEXTS[0])
    assert one.detected_source_lang == "ZH" and one.billed_characters == len(TEXTS[0])
    many = translator.translate_text(TEXTS, source_lang="ZH", target_lang="EN-GB")
    assert [r.text for r in many] == [native_translation(compat_stack, t) for t in TEXTS]


def test_translate_html_keeps_its_tags(compat_stack, translator):
    result = translator.translate_text("<p>你好</p>", target_lang="EN-US", tag_handling="html")
    assert result.text == f"<p>{native_translation(compat_stack, '你好')}</p>"
    xml = translator.translate_text("<note><body>你好</body></note>", target_lang="EN-US", tag_handling="xml")
    assert xml.text == f"<note><body>{native_translation(compat_stack, '你好')}</body></note>"


def test_usage_and_languages(compat_stack, translator):
    before = translator.get_usage().character.count
    translator.translate_text("谢谢", target_lang="EN-US")
    usage = translator.get_usage()
    assert usage.character.count == before + 2 and usage.character.valid
    assert [lang.code for lang in translator.get_source_languages()] == ["ZH"]
    targets = translator.get_target_languages()
    assert [lang.code for lang in targets] == ["EN"] and targets[0].supports_formality is False
    assert [(p.source_lang, p.target_lang) for p in translator.get_glossary_languages()] == [("zh", "en")]


def test_glossary_create_list_entries_use_delete(compat_stack, translator):
    glossary = translator.create_glossary("places", "ZH", "EN", {"北京": "Beijing"})
    assert glossary.entry_count == 1 and glossary.source_lang == "ZH" and glossary.target_lang == "EN"
    assert glossary.glossary_id in [g.glossary_id for g in translator.list_glossaries()]
    assert translator.get_glossary(glossary.glossary_id).name == "places"
    assert translator.get_glossary_entries(glossary) == {"北京": "Beijing"}
    result = translator.translate_text("北京", source_lang="ZH", target_lang="EN-US", glossary=glossary)
    assert "Beijing" in result.text
    from_csv = translator.create_glossary_from_csv("csv", "ZH", "EN", "上海,Shanghai\n")
    assert translator.get_glossary_entries(from_csv) == {"上海": "Shanghai"}
    translator.delete_glossary(glossary)
    translator.delete_glossary(from_csv)
    with pytest.raises(deepl.GlossaryNotFoundException):
        translator.get_glossary(glossary.glossary_id)


def test_another_keys_glossary_is_not_found(compat_stack, translator):
    glossary = translator.create_glossary("mine", "ZH", "EN", {"北京": "Beijing"})
    other = deepl.Translator(POOR, server_url=compat_stack.api.url)
    with pytest.raises(deepl.GlossaryNotFoundException):
        other.get_glossary(glossary.glossary_id)
    with pytest.raises(deepl.DeepLException):
        other.translate_text("北京", source_lang="ZH", target_lang="EN-US", glossary=glossary.glossary_id)
    translator.delete_glossary(glossary)


@pytest.mark.parametrize(
    "name, data, same",
    [
        ("notes.txt", "你好\n\n谢谢\n".encode(), None),
        ("page.html", samples.HTML.encode(), lambda b: html_shape(b.decode())),
        ("report.docx", samples.docx_bytes(), docx_shape),
    ],
)
def test_translate_document_from_filepath(compat_stack, translator, tmp_path, name, data, same):
    source, target = tmp_path / name, tmp_path / f"out-{name}"
    source.write_bytes(data)
    status = translator.translate_document_from_filepath(source, target, target_lang="EN-US")
    assert status.done and status.billed_characters > 0
    out = target.read_bytes()
    if same is None:
        expected = "\n\n".join(native_translation(compat_stack, t) for t in ("你好", "谢谢")) + "\n"
        assert out.decode() == expected
    else:
        assert same(out) == same(data)


def test_a_bad_key_is_an_authorization_error(compat_stack):
    with pytest.raises(deepl.AuthorizationException):
        deepl.Translator("not-a-key", server_url=compat_stack.api.url).translate_text("你好", target_lang="EN-US")


def test_an_exhausted_quota_is_quota_exceeded(compat_stack):
    poor = deepl.Translator(POOR, server_url=compat_stack.api.url)
    with pytest.raises(deepl.QuotaExceededException):
        poor.translate_text(["你好" * 11], target_lang="EN-US")  # 22 characters, over its 20 a day


def test_wire_format_errors_and_refusals(compat_stack):
    """What the client does not send: form bodies with repeated `text`, and DeepL's refusals."""
    url, auth = compat_stack.api.url + "/v2/translate", {"Authorization": f"DeepL-Auth-Key {GOOD}"}
    form = requests.post(
        url, data=[("text", "你好"), ("text", "谢谢"), ("target_lang", "EN")], headers=auth, timeout=40
    )
    assert form.status_code == 200, form.text
    assert [t["text"] for t in form.json()["translations"]] == [native_translation(compat_stack, t) for t in TEXTS]
    refusals = [
        ({"text": ["你好"]}, "target_lang"),
        ({"text": ["你好"], "target_lang": "EN-US", "formality": "more"}, "formality"),
        ({"text": ["你好"], "target_lang": "EN-US", "ignore_tags": ["x"]}, "ignore_tags"),
        ({"text": ["你好"], "target_lang": "EN-US", "glossary_id": "0" * 32}, "source_lang"),
        ({"text": ["你好"], "target_lang": "FR"}, ""),
        ({"target_lang": "EN-US"}, "text"),
    ]
    for body, named in refusals:
        answer = requests.post(url, json=body, headers=auth, timeout=40)
        assert answer.status_code == 400, (body, answer.text)
        assert named in answer.json()["message"]
    missing = requests.post(
        url,
        json={"text": ["你好"], "target_lang": "EN-US", "source_lang": "ZH", "glossary_id": "0" * 32},
        headers=auth,
        timeout=40,
    )
    assert missing.status_code == 404 and "message" in missing.json()
    huge = requests.post(url, data={"text": "你" * 400_000, "target_lang": "EN"}, headers=auth, timeout=40)
    assert huge.status_code == 413 and "message" in huge.json()
    nobody = requests.post(url, json={"text": ["你好"], "target_lang": "EN-US"}, timeout=40)
    assert nobody.status_code == 403 and "message" in nobody.json()


def test_documents_of_another_key_or_with_a_wrong_key_are_not_found(compat_stack):
    auth = {"Authorization": f"DeepL-Auth-Key {GOOD}"}
    up = requests.post(
        compat_stack.api.url + "/v2/document",
        files={"file": ("a.txt", io.BytesIO("你好".encode()))},
        data={"target_lang": "EN-US"},
        headers=auth,
        timeout=40,
    )
    assert up.status_code == 200, up.text
    handle = up.json()
    status_url = f"{compat_stack.api.url}/v2/document/{handle['document_id']}"
    wrong = requests.post(status_url, json={"document_key": "0" * 64}, headers=auth, timeout=40)
    assert wrong.status_code == 404
    other = requests.post(
        status_url,
        json={"document_key": handle["document_key"]},
        headers={"Authorization": f"DeepL-Auth-Key {POOR}"},
        timeout=40,
    )
    assert other.status_code == 404
    right = requests.post(status_url, json={"document_key": handle["document_key"]}, headers=auth, timeout=40)
    assert right.status_code == 200 and right.json()["status"] in ("queued", "translating", "done")

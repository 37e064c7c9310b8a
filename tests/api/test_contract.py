"""The contract's request models and their refusals, in process: every fault is named in transq's words,
the first one found; what passes is normalised (languages lower case, null as left out)."""

import pytest

from api.validation import validated
from shared import contract
from shared.errors import ValidationError
from shared.settings import Settings

SETTINGS = Settings(max_texts=3, wait_timeout=30)
ONE_OF = "give exactly one of `text` (a string) or `texts` (a list of strings)"
FORMATS = "format must be one of text, html, markdown, srt (a .docx, .xlsx, .pptx, .odt, .po, .xlf or .epub file goes to /v1/documents)"
TIMEOUT = "timeout must be a number of seconds from 0 to 30"


@pytest.mark.parametrize(
    "model, body, message",
    [
        (contract.JobRequest, {}, ONE_OF),
        (contract.JobRequest, {"text": "a", "texts": ["b"]}, ONE_OF),
        (contract.JobRequest, {"text": None}, "text must be a string"),
        (contract.JobRequest, {"texts": {"a": 1}}, "texts must be a list of strings"),
        (contract.JobRequest, {"texts": [1, ""]}, "texts[0] must be a string"),  # the first fault
        (contract.JobRequest, {"texts": ["a", "\u3000"]}, "texts[1] is empty"),
        (
            contract.JobRequest,
            {"texts": ["a", "\udfff"]},
            "texts[1] contains a lone surrogate, which is not valid Unicode text",
        ),
        (contract.JobRequest, {"texts": ["a"] * 4 + [3]}, "texts has 5 items; at most 3 are allowed"),
        (contract.JobRequest, {"texts": []}, "texts must not be empty"),
        (contract.JobRequest, {"text": "a", "format": "docx"}, FORMATS),
        (contract.JobRequest, {"text": "a", "format": None}, FORMATS),
        (contract.JobRequest, {"text": "a", "target_lang": 3}, "target_lang must be a string"),
        (contract.TranslateRequest, {"text": "a", "timeout": 31}, TIMEOUT),
        (contract.TranslateRequest, {"text": "a", "timeout": -1}, TIMEOUT),
        (contract.TranslateRequest, {"text": "a", "timeout": True}, TIMEOUT),
        (contract.TranslateRequest, {"text": "a", "timeout": "5"}, TIMEOUT),
        (contract.LegacyRequest, {}, "text is required"),
        (contract.LegacyRequest, {"text": ""}, "text is empty"),
        (contract.DocumentForm, {"file": b"x", "source_lang": 1}, "source_lang must be a string"),
    ],
)
def test_a_refusal_names_the_first_field_at_fault(model, body, message):
    with pytest.raises(ValidationError) as refused:
        validated(model, body, SETTINGS)
    assert refused.value.message == message


def test_what_passes_is_normalised():
    request = validated(
        contract.TranslateRequest, {"texts": ["你好"], "source_lang": " ZH ", "target_lang": ""}, SETTINGS
    )
    assert (request.items, request.source_lang, request.target_lang, request.format) == (["你好"], "zh", None, "text")
    assert validated(contract.TranslateRequest, {"text": "a", "timeout": None}, SETTINGS).timeout is None
    assert validated(contract.TranslateRequest, {"text": "a", "timeout": 30}, SETTINGS).timeout == 30.0
    assert validated(contract.JobRequest, {"text": "a", "timeout": 99, "other": 1}, SETTINGS).items == ["a"]

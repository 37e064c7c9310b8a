"""The other services' APIs transq speaks (api.compat), in /openapi.json under a tag each: their paths and
what they take, briefly; their full reference is the vendors' (DeepL's API v2, LibreTranslate's)."""

from __future__ import annotations

from typing import Any

from shared.settings import Settings

DEEPL = "DeepL API v2"
LIBRETRANSLATE = "LibreTranslate API"
TAGS = [
    {"name": DEEPL, "description": "DeepL's API v2 (`Authorization: DeepL-Auth-Key <key>`); docs/compat-apis.md."},
    {"name": LIBRETRANSLATE, "description": "LibreTranslate's API (`api_key` in the body); docs/compat-apis.md."},
]
_ANY = {
    "description": 'As the vendor\'s API answers (errors: DeepL\'s {"message"}, LibreTranslate\'s {"error"}).',
    "content": {"application/json": {"schema": {}}},
}
_FORM = {"type": "object", "additionalProperties": True}


def _operation(tag: str, summary: str, body: str | None = None, public: bool = False) -> dict[str, Any]:
    operation: dict[str, Any] = {"tags": [tag], "summary": summary, "responses": {"default": _ANY}}
    if body is not None:
        media = (
            {"multipart/form-data": {"schema": _FORM}}
            if body == "multipart"
            else {
                "application/json": {"schema": _FORM},
                "application/x-www-form-urlencoded": {"schema": _FORM},
            }
        )
        operation["requestBody"] = {"required": True, "content": media}
    if public:
        operation["security"] = [{}]
    return operation


def _path_parameters(*names: str) -> list[dict[str, Any]]:
    return [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}} for name in names]


def deepl_paths() -> dict[str, Any]:
    document = _path_parameters("document_id")
    glossary = _path_parameters("glossary_id")
    return {
        "/v2/translate": {"post": _operation(DEEPL, "Translate texts (waits for the job)", "form")},
        "/v2/document": {"post": _operation(DEEPL, "Upload a document to translate", "multipart")},
        "/v2/document/{document_id}": {
            "post": {**_operation(DEEPL, "A document's status", "form"), "parameters": document}
        },
        "/v2/document/{document_id}/result": {
            "post": {**_operation(DEEPL, "The translated document", "form"), "parameters": document}
        },
        "/v2/glossaries": {
            "get": _operation(DEEPL, "The caller's glossaries"),
            "post": _operation(DEEPL, "Make a glossary from TSV or CSV entries", "form"),
        },
        "/v2/glossaries/{glossary_id}": {
            "get": {**_operation(DEEPL, "A glossary"), "parameters": glossary},
            "delete": {**_operation(DEEPL, "Delete a glossary"), "parameters": glossary},
        },
        "/v2/glossaries/{glossary_id}/entries": {
            "get": {**_operation(DEEPL, "A glossary's entries (TSV)"), "parameters": glossary}
        },
        "/v2/glossary-language-pairs": {"get": _operation(DEEPL, "The pairs glossaries may be made for")},
        "/v2/usage": {"get": _operation(DEEPL, "Characters this billing period (the quota's)")},
        "/v2/languages": {"get": _operation(DEEPL, "Source or target languages (`type`)")},
    }


def libretranslate_paths() -> dict[str, Any]:
    download = _path_parameters("job_id", "key", "name")
    return {
        "/translate": {"post": _operation(LIBRETRANSLATE, "Translate `q` (waits for the job)", "form")},
        "/detect": {"post": _operation(LIBRETRANSLATE, "Detect the language of `q`", "form")},
        "/languages": {"get": _operation(LIBRETRANSLATE, "The languages, each with its targets", public=True)},
        "/translate_file": {"post": _operation(LIBRETRANSLATE, "Translate a file (waits for it)", "multipart")},
        "/download_file/{job_id}/{key}/{name}": {
            "get": {
                **_operation(LIBRETRANSLATE, "A translated file (its URL is its key)", public=True),
                "parameters": download,
            }
        },
        "/frontend/settings": {"get": _operation(LIBRETRANSLATE, "The server's settings", public=True)},
    }


def compat_paths(settings: Settings) -> dict[str, Any]:
    """The paths of the APIs TRANSQ_COMPAT_APIS turns on."""
    found: dict[str, Any] = {}
    if "deepl" in settings.compat_api_list:
        found.update(deepl_paths())
    if "libretranslate" in settings.compat_api_list:
        found.update(libretranslate_paths())
    return found

"""LibreTranslate's API (https://libretranslate.com/docs) over transq: POST /translate, /detect,
/translate_file, GET /languages, /frontend/settings; the key as the body's `api_key`, errors as
{"error": "..."} with LibreTranslate's status codes."""

from __future__ import annotations

from flask import Blueprint

from api.compat.libretranslate.params import presented_key

__all__ = ["LIMITED", "OPEN", "blueprints", "presented_key"]

# Paths that answer without a key: the languages and settings (as LibreTranslate's and GET /v1/languages do),
# and a translated file, whose URL carries its own key (api.compat.document_keys).
OPEN = ("/languages", "/frontend/settings", "/download_file/")
# Of those, what still counts against the address's rate limit: a download serves a whole document.
LIMITED = ("/download_file/",)


def blueprints() -> list[Blueprint]:
    from api.compat.libretranslate import files, translate

    return [translate.bp, files.bp]

"""DeepL API v2 (https://developers.deepl.com/docs/api-reference) over transq: /v2/translate,
/v2/document, /v2/glossaries, /v2/glossary-language-pairs, /v2/usage, /v2/languages; the key as
`Authorization: DeepL-Auth-Key <key>`, errors as {"message"} with DeepL's status codes."""

from __future__ import annotations

from flask import Blueprint

from api.compat.deepl.shape import presented_key

__all__ = ["blueprints", "presented_key"]


def blueprints() -> list[Blueprint]:
    from api.compat.deepl import account, documents, glossaries, translate

    return [translate.bp, documents.bp, glossaries.bp, account.bp]

"""POST /v1/detect: the language of each text, as `source_lang: "auto"` would detect it; no job, no
worker. The body is a translation request's `text` or `texts`, under the same limits and with the same
errors (api.validation); API keys and rate limits apply as to every other call."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from api import services
from api.language_detection import detect_many
from api.validation import parse_translation_request, read_json_object

bp = Blueprint("detect", __name__)


@bp.post("/v1/detect")
def detect():  # type: ignore[no-untyped-def]
    """{"text"} or {"texts"} -> {"detections": [{"language", "confidence"}, ...]}, one per text."""
    settings = services().settings
    body = read_json_object(request, settings)
    texts = parse_translation_request({k: body[k] for k in ("text", "texts") if k in body}, settings).texts
    return {"detections": [found.public() for found in detect_many(texts)]}


def openapi_path(text: dict[str, Any], max_texts: int, errors: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI path item of POST /v1/detect, for api.openapi to add under "/v1/detect": `text` is the
    schema of one text, `errors` the error responses by status (400, 401, 408, 413, 415, 422, 429)."""
    detection = {
        "type": "object",
        "required": ["language", "confidence"],
        "properties": {
            "language": {
                "type": "string",
                "nullable": True,
                "description": "ISO 639-1 code (zh, en, ja, fr, …); null when the text has no letters.",
            },
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
    }
    body = {
        "oneOf": [
            {
                "type": "object",
                "required": ["texts"],
                "not": {"required": ["text"]},
                "properties": {"texts": {"type": "array", "minItems": 1, "maxItems": max_texts, "items": text}},
            },
            {"type": "object", "required": ["text"], "not": {"required": ["texts"]}, "properties": {"text": text}},
        ]
    }
    answer = {
        "type": "object",
        "required": ["detections"],
        "properties": {"detections": {"type": "array", "items": detection}},
    }
    return {
        "post": {
            "summary": 'Detect the language of each text (as source_lang "auto" does); no job is made.',
            "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
            "responses": {
                "200": {
                    "description": "One detection per text, in order.",
                    "content": {"application/json": {"schema": answer}},
                },
                **errors,
            },
        }
    }

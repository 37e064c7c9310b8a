"""POST /v1/detect: the language of each text, as `source_lang: "auto"` would detect it; no job, no
worker. The body is a translation request's `text` or `texts`, under the same limits and with the same
errors (api.validation); API keys and rate limits apply as to every other call."""

from __future__ import annotations

from flask import Blueprint, request

from api.current import services
from api.validation import parse_translation_request, read_json_object
from shared.contract import Detection, Detections, DetectRequest
from shared.routing.language_detection import detect_many

bp = Blueprint("detect", __name__)


@bp.post("/v1/detect")
def detect():  # type: ignore[no-untyped-def]
    """{"text"} or {"texts"} -> {"detections": [{"language", "confidence"}, ...]}, one per text."""
    settings = services().settings
    body = read_json_object(request, settings)
    texts = parse_translation_request(body, settings, DetectRequest).texts
    return Detections(detections=[Detection(**found.public()) for found in detect_many(texts)]).model_dump()

"""LibreTranslate's text calls: POST /translate (one job of all its texts, waited for), POST /detect,
GET /languages and GET /frontend/settings."""

from __future__ import annotations

from typing import Any

from api.compat.languages import name_of, served_pairs, targets_by_source
from api.compat.libretranslate.params import blueprint, params, required
from api.compat.waiting import finished, source_of, submitted, translations
from api.current import services
from api.validation import parse_translation_request
from shared.contract import DetectRequest, TranslateRequest
from shared.document_formats import EXTENSIONS
from shared.errors import BadRequest
from shared.routing.language_detection import detect_many

bp = blueprint("libretranslate_translate")
_FORMATS = {"text": "text", "html": "html"}


@bp.post("/translate")
def translate():  # type: ignore[no-untyped-def]
    """{"q": "..." or [...], "source": "zh" or "auto", "target": "en", "format": "text"|"html"} ->
    {"translatedText": ..., "detectedLanguage": ... (with "auto")}, a list for a list."""
    q = required("q")
    source, target = str(required("source")).lower(), str(required("target")).lower()
    fmt = _FORMATS.get(str(params().get("format") or "text"))
    if fmt is None:
        raise BadRequest("Invalid request: format must be text or html")
    alternatives = _alternatives(params().get("alternatives"))
    texts = q if isinstance(q, list) else [q]
    body = {"texts": texts, "source_lang": source, "target_lang": target, "format": fmt}
    job = finished(submitted(parse_translation_request(body, services().settings, TranslateRequest)))
    translated = translations(job)
    answer: dict[str, Any] = {"translatedText": translated if isinstance(q, list) else translated[0]}
    if source == "auto":
        detected = {
            "confidence": _percent((job.detected or {}).get("confidence", 1.0)),
            "language": source_of(job, None),
        }
        answer["detectedLanguage"] = [detected] * len(texts) if isinstance(q, list) else detected
    if alternatives:  # transq makes one translation: no alternatives to it
        answer["alternatives"] = [[] for _ in texts] if isinstance(q, list) else []
    return answer


def _alternatives(value: Any) -> int:
    try:
        count = int(value or 0)
    except (TypeError, ValueError):
        raise BadRequest("Invalid request: alternatives must be a number") from None
    if not 0 <= count <= 3:
        raise BadRequest("Invalid request: alternatives must be from 0 to 3")
    return count


def _percent(confidence: Any) -> float:
    return round(float(confidence or 0) * 100, 1)


@bp.post("/detect")
def detect():  # type: ignore[no-untyped-def]
    """{"q": "..."} -> [{"confidence": 0-100, "language"}], the detection of transq's source_lang "auto"."""
    q = required("q")
    body = {"texts": q if isinstance(q, list) else [q]}
    texts = parse_translation_request(body, services().settings, DetectRequest).texts
    found = detect_many(texts)
    listed = [[{"confidence": _percent(d.confidence), "language": d.language or "und"}] for d in found]
    return listed if isinstance(q, list) else listed[0]


@bp.get("/languages")
def languages():  # type: ignore[no-untyped-def]
    """Every served language, each with the languages it translates into."""
    targets = targets_by_source()
    codes = sorted({code for pair in served_pairs() for code in pair})
    return [{"code": code, "name": name_of(code), "targets": targets.get(code, [])} for code in codes]


@bp.get("/frontend/settings")
def frontend_settings():  # type: ignore[no-untyped-def]
    settings = services().settings
    pairs = served_pairs()
    source, target = pairs[0] if pairs else ("auto", "en")
    return {
        "charLimit": settings.max_chars,
        "frontendTimeout": 500,
        "apiKeys": bool(settings.api_key_list),
        "keyRequired": bool(settings.api_key_list),
        "suggestions": False,
        "filesTranslation": True,
        "supportedFilesFormat": sorted(EXTENSIONS),
        "language": {
            "source": {"code": source, "name": name_of(source)},
            "target": {"code": target, "name": name_of(target)},
        },
    }

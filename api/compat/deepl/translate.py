"""POST /v2/translate: DeepL's text translation, as one transq job of all its texts, waited for."""

from __future__ import annotations

from api.auth import client_id
from api.compat.deepl.params import Params, deepl_code, language
from api.compat.deepl.shape import blueprint
from api.compat.waiting import finished, source_of, submitted, translations
from api.current import services
from api.validation import parse_translation_request
from shared.contract import TranslateRequest
from shared.errors import BadRequest

bp = blueprint("deepl_translate")


@bp.post("/translate")
def translate():  # type: ignore[no-untyped-def]
    """{"text": [...], "target_lang": "EN-US", ...} -> {"translations": [{"detected_source_language", "text",
    "billed_characters"}, ...]}, one per text."""
    params = Params.of_request()
    params.check_supported()
    texts = params.texts()
    target = language(params.text("target_lang", required=True))
    source = language(params.text("source_lang"))
    glossary_id = params.text("glossary_id")
    if glossary_id is not None and source is None:
        raise BadRequest("Use of a glossary requires the source_lang parameter to be set.")
    tag_handling = params.text("tag_handling")
    if tag_handling not in (None, "html", "xml"):
        raise BadRequest("Value for 'tag_handling' not supported: this server takes html or xml.")
    body = {"texts": texts, "source_lang": source or "auto", "target_lang": target}
    if tag_handling:
        body["format"] = "html"  # transq's HTML parser keeps XML's tags as it keeps HTML's
    if glossary_id is not None:
        _check_glossary(glossary_id, source, target)
        body["glossary_id"] = glossary_id
    body.update(_memory(params))
    job = finished(submitted(parse_translation_request(body, services().settings, TranslateRequest)))
    detected = deepl_code(source_of(job, source))
    answers = []
    for text, translated in zip(texts, translations(job)):
        answer = {"detected_source_language": detected, "text": translated, "billed_characters": len(text)}
        if params.one("model_type") is not None:
            answer["model_type_used"] = "latency_optimized"
        answers.append(answer)
    return {"translations": answers}


def _check_glossary(glossary_id: str, source: str | None, target: str | None) -> None:
    """A DeepL glossary is for one pair: 400 when it is not the request's (an unknown id is 404 later, as
    transq's own glossary_id is)."""
    stored = services().glossaries.get(client_id(), glossary_id) if len(glossary_id) == 32 else None
    if stored is not None and stored.pair is not None and stored.pair != (source, target):
        raise BadRequest(
            f"The glossary's language pair ({stored.pair[0].upper()}-{stored.pair[1].upper()}) does not match "
            "the request's source_lang and target_lang."
        )


def _memory(params: Params) -> dict[str, object]:
    """DeepL's translation_memory_id and translation_memory_threshold as transq's translation_memory (a memory
    of this key's: POST /v1/memories) and translation_memory_threshold."""
    memory_id, threshold = params.text("translation_memory_id"), params.one("translation_memory_threshold")
    if memory_id is None:
        if threshold is not None:
            raise BadRequest("Use of translation_memory_threshold requires the translation_memory_id parameter.")
        return {}
    found: dict[str, object] = {"translation_memory": memory_id}
    if threshold is not None:
        found["translation_memory_threshold"] = threshold
    return found

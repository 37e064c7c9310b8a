"""GET /openapi.json, generated from the contract (shared.contract), and GET /docs (Swagger UI, served locally).

Built with pydantic's own JSON Schema and this short assembler: OpenAPI 3.1's schema dialect is JSON Schema
2020-12, which is what pydantic writes, so the models' schemas go in as they are; a library (spectree,
flask-openapi3) would take over the routes' validation and error shapes, which are transq's own.
"""

from __future__ import annotations

from typing import Any

import redis
from flask import Blueprint, Response, abort, send_from_directory
from pydantic.json_schema import GenerateJsonSchema, models_json_schema

from api.current import services
from api.security_headers import page_policy
from shared.contract.compat_paths import DEEPL, LIBRETRANSLATE, TAGS
from shared.contract.operations import REQUESTS, VIEWS, paths
from shared.routing.detected_route import AUTO
from shared.routing.route_table import Pair
from shared.settings import Settings

bp = Blueprint("openapi", __name__)
OPENAPI_VERSION = "3.1.0"


class _Schemas(GenerateJsonSchema):
    """pydantic's JSON Schema, less the titles it derives from field names and the `null` defaults of
    fields a body may leave out."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: Any) -> dict[str, Any]:
        generated = super().default_schema(schema)
        if generated.get("default", ...) is None:
            del generated["default"]
        return generated


def schemas() -> dict[str, Any]:
    """The components' schemas: the requests as validated, the views as shown."""
    models = [(model, "validation") for model in REQUESTS] + [(model, "serialization") for model in VIEWS]
    _, found = models_json_schema(models, ref_template="#/components/schemas/{model}", schema_generator=_Schemas)
    return found["$defs"]


def with_limits(components: dict[str, Any], settings: Settings, pairs: list[Pair]) -> dict[str, Any]:
    """The limits the models check against the settings, and the served languages, stated in their schemas."""
    served = ", ".join(sorted(f"{p.source}-{p.target}" for p in pairs))
    for model in REQUESTS:
        fields = components[model.__name__]["properties"]
        for field in ("source_lang", "target_lang"):
            if field in fields:
                fields[field]["enum"] = sorted({getattr(p, field.split("_")[0]) for p in pairs})
        if "source_lang" in fields and "texts" in fields:  # detected from the texts (a document's: not yet)
            fields["source_lang"]["enum"].append(AUTO)
        if not settings.callback_secret:  # callbacks are off on this server: the field is refused (422)
            fields.pop("callback_url", None)
        for name in ("glossary", "terms"):  # a glossary's limits (TRANSQ_GLOSSARY_MAX_TERMS, _MAX_TERM_CHARS)
            if name in fields:
                fields[name]["maxProperties"] = settings.glossary_max_terms
                fields[name]["propertyNames"]["maxLength"] = settings.glossary_max_term_chars
                fields[name]["additionalProperties"]["maxLength"] = settings.glossary_max_term_chars
        if "source_lang" in fields:
            fields["source_lang"]["description"] += f" Served now: {served}."
        for text in (fields.get("text"), fields.get("texts", {}).get("items")):
            if text is not None:
                text["maxLength"] = settings.max_chars
        if "texts" in fields:
            fields["texts"]["maxItems"] = settings.max_texts
        if "timeout" in fields:
            fields["timeout"]["maximum"] = settings.wait_timeout
        for option in fields.get("translation_memory", {}).get("anyOf", []):  # TRANSQ_MEMORY_MAX_PER_JOB
            if option.get("type") == "array":
                option["maxItems"] = settings.memory_max_per_job
    return components


def served_pairs() -> list[Pair]:
    try:
        return list(services().routes.pairs().values())
    except redis.RedisError:  # the document is still served; it names the API's own pair meanwhile
        default = services().routes.default
        return [Pair(default.source, default.target, [default])]


def spec() -> dict[str, Any]:
    settings = services().settings
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "transq",
            "version": "1.0.0",
            "description": "Queue-based machine translation: submit jobs, poll them, get cached repeats at once.",
        },
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            },
            "schemas": with_limits(schemas(), settings, served_pairs()),
        },
        "security": [{}, {"bearer": []}, {"apiKey": []}],
        "paths": paths(settings),
        "tags": [tag for tag in TAGS if tag["name"] in _compat_tags(settings)],
    }


def _compat_tags(settings: Settings) -> set[str]:
    return {DEEPL if name == "deepl" else LIBRETRANSLATE for name in settings.compat_api_list}


@bp.get("/openapi.json")
def openapi_json():  # type: ignore[no-untyped-def]
    return spec()


_DOCS_SCRIPT = 'SwaggerUIBundle({url: "/openapi.json", dom_id: "#ui"});'
_DOCS_PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><title>transq API</title>
<link rel="stylesheet" href="/docs/static/swagger-ui.css"></head><body><div id="ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script>{_DOCS_SCRIPT}</script></body></html>"""
_DOCS_POLICY = page_policy((_DOCS_SCRIPT,), inline_styles=True)  # Swagger UI sets inline styles


@bp.get("/docs")
def docs():  # type: ignore[no-untyped-def]
    return Response(_DOCS_PAGE, mimetype="text/html", headers={"Content-Security-Policy": _DOCS_POLICY})


@bp.get("/docs/static/<path:name>")
def docs_static(name: str):  # type: ignore[no-untyped-def]
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        abort(404)
    return send_from_directory(swagger_ui_path, name)

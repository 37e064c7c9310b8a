"""The OpenAPI description of glossaries: the /v1/glossaries paths, the Glossary schemas, and the two fields a
translation request takes (`glossary`, `glossary_id`), for api.openapi to merge into its document."""

from __future__ import annotations

from typing import Any

from shared.settings import Settings

_ID = {"name": "glossary_id", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"}}


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _glossary(description: str, schema: str = "Glossary") -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
    }


def terms_schema(settings: Settings) -> dict[str, Any]:
    term = {"type": "string", "minLength": 1, "maxLength": settings.glossary_max_term_chars}
    return {
        "type": "object",
        "description": "Source term -> target term; a term that maps to itself is kept as written (do not "
        "translate). Latin-script terms match at word boundaries, case counts (a lower-case term also matches "
        "with a capital first letter), the longest term first; the target appears verbatim in the translation.",
        "maxProperties": settings.glossary_max_terms,
        "additionalProperties": term,
        "example": {"北京": "Beijing", "GitHub": "GitHub"},
    }


def request_fields(settings: Settings) -> dict[str, Any]:
    """The properties a translation request (POST /v1/jobs, /v1/translate) gains."""
    return {
        "glossary": terms_schema(settings),
        "glossary_id": {
            "type": "string",
            "pattern": "^[0-9a-f]{32}$",
            "description": "A stored glossary of this API key (POST /v1/glossaries); `glossary` terms are added to "
            "it and win where both have a term.",
        },
    }


def schemas(settings: Settings) -> dict[str, Any]:
    summary = {
        "type": "object",
        "required": ["id", "name", "term_count", "digest", "created_at"],
        "properties": {
            "id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
            "name": {"type": "string"},
            "term_count": {"type": "integer"},
            "digest": {"type": "string", "description": "Stable digest of the terms, whatever their order."},
            "created_at": {"type": "string", "format": "date-time"},
        },
    }
    full = {**summary, "required": [*summary["required"], "terms"]}
    full["properties"] = {**summary["properties"], "terms": terms_schema(settings)}
    return {"GlossarySummary": summary, "Glossary": full}


def paths(settings: Settings) -> dict[str, Any]:
    common = {
        "401": _error("API keys are configured and the key is missing or wrong (`unauthorized`)."),
        "429": _error("Rate limit exceeded (`rate_limited`)."),
        "503": _error("Redis unavailable (`unavailable`)."),
    }
    missing = _error("No glossary of this API key has this id (`not_found`).")
    body = {
        "type": "object",
        "required": ["terms"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "maxLength": 100},
            "terms": {**terms_schema(settings), "minProperties": 1},
        },
    }
    return {
        "/v1/glossaries": {
            "post": {
                "summary": "Store a glossary (owned by the API key)",
                "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
                "responses": {
                    "201": _glossary("The stored glossary; Location is its URL."),
                    "400": _error("Body is not valid JSON (`invalid_json`)."),
                    "409": _error("The key stores TRANSQ_GLOSSARY_MAX_STORED glossaries already (`conflict`)."),
                    "413": _error("Body over the byte limit (`payload_too_large`)."),
                    "415": _error("Content-Type is not application/json (`unsupported_media_type`)."),
                    "422": _error("A bad name or term, too many terms, an unknown field (`validation_error`)."),
                    **common,
                },
            },
            "get": {
                "summary": "This API key's glossaries, without their terms",
                "responses": {
                    "200": {
                        "description": "Oldest first.",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "glossaries": {
                                            "type": "array",
                                            "items": {"$ref": "#/components/schemas/GlossarySummary"},
                                        }
                                    },
                                }
                            }
                        },
                    },
                    **common,
                },
            },
        },
        "/v1/glossaries/{glossary_id}": {
            "get": {
                "summary": "Read a stored glossary",
                "parameters": [_ID],
                "responses": {"200": _glossary("The glossary, with its terms."), "404": missing, **common},
            },
            "delete": {
                "summary": "Delete a stored glossary (jobs already submitted with it keep its terms)",
                "parameters": [_ID],
                "responses": {"204": {"description": "Deleted."}, "404": missing, **common},
            },
        },
    }

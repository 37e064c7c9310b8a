"""The operations on stored glossaries (POST/GET /v1/glossaries, GET/DELETE /v1/glossaries/{glossary_id})."""

from __future__ import annotations

from typing import Any

from shared.contract.fields import GLOSSARY_ID_PATTERN
from shared.contract.responses import ERRORS, READ_ERRORS, answer, error, json_body
from shared.contract.stored_bodies import GlossaryBody
from shared.contract.views import Glossaries, Glossary

GLOSSARY_ID = {
    "name": "glossary_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": GLOSSARY_ID_PATTERN},
}
MISSING = error("No glossary of this API key has this id (`not_found`).")


def glossary_paths() -> dict[str, Any]:
    return {
        "/v1/glossaries": {
            "post": {
                "summary": "Store a glossary (owned by the API key)",
                "requestBody": json_body(GlossaryBody),
                "responses": {
                    "201": answer("The stored glossary.", Glossary, Location="The glossary's URL."),
                    **{code: ERRORS[code] for code in ("400", "401", "408", "413", "415", "429", "503")},
                    "409": error("The key stores TRANSQ_GLOSSARY_MAX_STORED glossaries already (`conflict`)."),
                    "422": error("A bad name or term, too many terms, an unknown field (`validation_error`)."),
                },
            },
            "get": {
                "summary": "This API key's glossaries, without their terms",
                "responses": {"200": answer("Oldest first.", Glossaries), **READ_ERRORS},
            },
        },
        "/v1/glossaries/{glossary_id}": {
            "get": {
                "summary": "Read a stored glossary",
                "parameters": [GLOSSARY_ID],
                "responses": {"200": answer("The glossary, with its terms.", Glossary), "404": MISSING, **READ_ERRORS},
            },
            "delete": {
                "summary": "Delete a stored glossary (jobs already submitted with it keep its terms)",
                "parameters": [GLOSSARY_ID],
                "responses": {"204": {"description": "Deleted."}, "404": MISSING, **READ_ERRORS},
            },
        },
    }

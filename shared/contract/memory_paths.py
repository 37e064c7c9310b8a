"""The operations on translation memories (POST/GET /v1/memories, GET/DELETE /v1/memories/{memory_id}) and a
job's corrections (POST /v1/jobs/{job_id}/corrections)."""

from __future__ import annotations

from typing import Any

from shared.contract.responses import ERRORS, JOB_ID, READ_ERRORS, answer, error, json_body
from shared.contract.stored_bodies import CorrectionsBody
from shared.contract.views import Corrected, ImportedMemory, Memories

MEMORY_ID = {
    "name": "memory_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
}
MISSING = error("No translation memory of this API key has this id (`not_found`).")
LANGUAGE = {"type": "string", "pattern": "^[A-Za-z]{2,3}$"}
FORM = {
    "type": "object",
    "required": ["file", "source_lang", "target_lang"],
    "properties": {
        "file": {
            "type": "string",
            "contentMediaType": "application/octet-stream",
            "description": "TMX 1.4, TSV or CSV.",
        },
        "source_lang": LANGUAGE,
        "target_lang": LANGUAGE,
        "name": {"type": "string", "maxLength": 100},
        "format": {"enum": ["tmx", "tsv", "csv"], "description": "Default: the file name's extension."},
    },
}


def memory_paths() -> dict[str, Any]:
    return {
        "/v1/memories": {
            "post": {
                "summary": "Import a translation memory for a language pair (owned by the API key)",
                "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": FORM}}},
                "responses": {
                    "201": answer("The stored memory.", ImportedMemory, Location="The memory's URL."),
                    **{code: ERRORS[code] for code in ("400", "401", "408", "429", "503")},
                    "409": error("The key stores TRANSQ_MEMORY_MAX_STORED memories already (`conflict`)."),
                    "413": error("Over TRANSQ_MEMORY_MAX_BYTES, or more than TRANSQ_MEMORY_MAX_ENTRIES units."),
                    "422": error(
                        "Malformed, not TMX, entity declarations or external references, no unit of the pair, a "
                        "segment over TRANSQ_MEMORY_MAX_ENTRY_CHARS, a bad language or format (`validation_error`)."
                    ),
                },
            },
            "get": {
                "summary": "This API key's translation memories, without their entries",
                "responses": {"200": answer("Oldest first.", Memories), **READ_ERRORS},
            },
        },
        "/v1/memories/{memory_id}": {
            "get": {
                "summary": "Export a translation memory as TMX 1.4",
                "parameters": [MEMORY_ID],
                "responses": {
                    "200": answer("The memory.", {"type": "string"}, media="application/x-tmx+xml"),
                    "404": MISSING,
                    **READ_ERRORS,
                },
            },
            "delete": {
                "summary": "Delete a translation memory",
                "parameters": [MEMORY_ID],
                "responses": {"204": {"description": "Deleted."}, "404": MISSING, **READ_ERRORS},
            },
        },
        "/v1/jobs/{job_id}/corrections": {
            "post": {
                "summary": "Store a job's corrected sentences in a translation memory, for the next job",
                "parameters": [JOB_ID],
                "requestBody": json_body(CorrectionsBody),
                "responses": {
                    "200": answer("What the memory gained.", Corrected),
                    "404": error("No such job or memory of this API key (`not_found`)."),
                    "409": error("The job kept no sentences (it named no memory), or the memory is full (`conflict`)."),
                    "422": error("A bad index or target, or a memory of another pair (`validation_error`)."),
                    **{code: ERRORS[code] for code in ("400", "401", "413", "415", "429", "503")},
                },
            }
        },
    }

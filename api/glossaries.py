"""Stored glossaries, owned by the API key like jobs: POST /v1/glossaries, GET /v1/glossaries (the caller's),
GET and DELETE /v1/glossaries/<id> (another key's id is 404, as an unknown one); and the glossary a translation
request asks for (`request_glossary`: its `glossary` terms over the stored one its `glossary_id` names)."""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, request

from api import services
from api.auth import owner_id
from api.errors import Conflict, NotFound, ValidationError
from api.validation import read_json_object
from shared.glossary import Glossary, GlossaryError
from shared.glossary_store import GlossaryStore

bp = Blueprint("glossaries", __name__)

MAX_NAME_CHARS = 100
_ID = re.compile(r"[0-9a-f]{32}")


def store() -> GlossaryStore:
    found = services()
    return GlossaryStore(found.redis, found.keys, found.settings.glossary_max_stored)


def parse_terms(value: Any, name: str) -> Glossary:
    """A glossary's terms, validated; 422 naming the field."""
    try:
        return Glossary.parse(value, services().settings, name)
    except GlossaryError as exc:
        raise ValidationError(str(exc)) from None


def request_glossary(body: dict[str, Any], owner: str) -> Glossary | None:
    """The glossary of a translation request: the stored glossary `glossary_id` names (one of this owner's),
    with the request's own `glossary` terms added (they win where both have a term); None when it names
    neither. 422 naming the field for a bad one, an unknown id, or more terms than TRANSQ_GLOSSARY_MAX_TERMS."""
    own = parse_terms(body["glossary"], "glossary") if body.get("glossary") is not None else None
    glossary_id = body.get("glossary_id")
    if glossary_id is None:
        return own or None
    if not isinstance(glossary_id, str) or not _ID.fullmatch(glossary_id):
        raise ValidationError("glossary_id must be the id of a stored glossary (32 hex digits)")
    stored = store().get(owner, glossary_id)
    if stored is None:
        raise ValidationError(f"glossary_id {glossary_id} names no glossary of this API key")
    merged = stored.glossary.merged(own)
    limit = services().settings.glossary_max_terms
    if len(merged) > limit:
        raise ValidationError(
            f"glossary and glossary_id have {len(merged)} terms together; at most {limit} are allowed "
            "(TRANSQ_GLOSSARY_MAX_TERMS)"
        )
    return merged


@bp.post("/v1/glossaries")
def create():  # type: ignore[no-untyped-def]
    """Store a glossary: `{"name": "...", "terms": {"北京": "Beijing"}}` -> 201 and the glossary."""
    body = read_json_object(request, services().settings)
    unknown = sorted(set(body) - {"name", "terms"})
    if unknown:
        raise ValidationError(f"unknown field `{unknown[0]}`: a glossary has `name` (optional) and `terms`")
    name = body.get("name", "")
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
        raise ValidationError(f"name must be a string of at most {MAX_NAME_CHARS} characters")
    if "terms" not in body:
        raise ValidationError('terms is required: an object of source term to target term, {"北京": "Beijing"}')
    glossary = parse_terms(body["terms"], "terms")
    if not glossary:
        raise ValidationError("terms must not be empty")
    stored = store().create(owner_id(), name.strip(), glossary)
    if stored is None:
        limit = services().settings.glossary_max_stored
        raise Conflict(f"this API key already stores {limit} glossaries (TRANSQ_GLOSSARY_MAX_STORED): delete one first")
    return stored.public(), 201, {"Location": f"/v1/glossaries/{stored.id}"}


@bp.get("/v1/glossaries")
def listing():  # type: ignore[no-untyped-def]
    """The caller's glossaries, oldest first, without their terms."""
    return {"glossaries": [stored.summary() for stored in store().list(owner_id())]}


@bp.get("/v1/glossaries/<glossary_id>")
def read(glossary_id: str):  # type: ignore[no-untyped-def]
    stored = store().get(owner_id(), glossary_id) if _ID.fullmatch(glossary_id) else None
    if stored is None:
        raise NotFound("no such glossary")
    return stored.public()


@bp.delete("/v1/glossaries/<glossary_id>")
def delete(glossary_id: str):  # type: ignore[no-untyped-def]
    if not (_ID.fullmatch(glossary_id) and store().delete(owner_id(), glossary_id)):
        raise NotFound("no such glossary")
    return "", 204

"""Stored glossaries, owned by the client (its API key; with keys off, its address): POST /v1/glossaries,
GET /v1/glossaries (the caller's), GET and DELETE /v1/glossaries/<id> (another client's id is 404, as an
unknown one); and the glossary a translation request asks for (`with_glossary`: its `glossary` terms over
the stored one its `glossary_id` names). Each counts against its owner's storage until it expires
(shared.store.glossary_store)."""

from __future__ import annotations

import dataclasses
import re

from flask import Blueprint, request

from api.auth import client_id
from api.current import services
from api.validation import TranslationRequest, read_json_object, validated
from shared.contract import GlossaryBody
from shared.errors import Conflict, NotFound, StorageQuotaExceeded, ValidationError
from shared.store.glossary_store import GlossaryRefused, GlossaryStore
from shared.text.glossary import Glossary

bp = Blueprint("glossaries", __name__)

_ID = re.compile(r"[0-9a-f]{32}")


def store() -> GlossaryStore:
    return services().glossaries


def with_glossary(translation: TranslationRequest, owner: str) -> TranslationRequest:
    """The request with its glossary: the stored glossary its `glossary_id` names (one of this owner's, the
    client as api.auth.client_id names it; reading it renews it), with the request's own `glossary` terms
    added (they win where both have a term). 422 for an unknown id, or more terms together than
    TRANSQ_GLOSSARY_MAX_TERMS; 404 when the id names no glossary of this owner."""
    own = Glossary.of(translation.glossary) if translation.glossary else None
    if translation.glossary_id is None:
        return translation
    stored = store().get(owner, translation.glossary_id)
    if stored is None:
        raise NotFound(f"glossary_id {translation.glossary_id} names no glossary of this API key")
    merged = stored.glossary.merged(own)
    limit = services().settings.glossary_max_terms
    if len(merged) > limit:
        raise ValidationError(
            f"glossary and glossary_id have {len(merged)} terms together; at most {limit} are allowed "
            "(TRANSQ_GLOSSARY_MAX_TERMS)"
        )
    return dataclasses.replace(translation, glossary=merged.as_dict())


@bp.post("/v1/glossaries")
def create():  # type: ignore[no-untyped-def]
    """Store a glossary: `{"name": "...", "terms": {"北京": "Beijing"}}` -> 201 and the glossary."""
    settings = services().settings
    body = validated(GlossaryBody, read_json_object(request, settings), settings)
    stored = store().create(client_id(), body.name.strip(), Glossary.of(body.terms))
    if isinstance(stored, GlossaryRefused):
        refuse(stored)
    return stored.public(), 201, {"Location": f"/v1/glossaries/{stored.id}"}


def refuse(refused: GlossaryRefused) -> None:
    settings = services().settings
    if refused.reason == "full":
        limit = settings.glossary_max_stored
        raise Conflict(f"this client already stores {limit} glossaries (TRANSQ_GLOSSARY_MAX_STORED): delete one first")
    raise StorageQuotaExceeded(
        f"this client holds {refused.held} bytes in the broker, and this glossary would take it over its limit of "
        f"{settings.client_storage_bytes} (TRANSQ_CLIENT_STORAGE_BYTES): delete a glossary, or wait for what it "
        f"holds to expire, the first of it in {refused.retry_after}s (a stored glossary "
        f"TRANSQ_GLOSSARY_TTL={settings.glossary_ttl}s after it was last used)",
        retry_after=min(refused.retry_after, 3600),
    )


@bp.get("/v1/glossaries")
def listing():  # type: ignore[no-untyped-def]
    """The caller's glossaries, oldest first, without their terms."""
    return {"glossaries": [stored.summary() for stored in store().list(client_id())]}


@bp.get("/v1/glossaries/<glossary_id>")
def read(glossary_id: str):  # type: ignore[no-untyped-def]
    stored = store().get(client_id(), glossary_id) if _ID.fullmatch(glossary_id) else None
    if stored is None:
        raise NotFound("no such glossary")
    return stored.public()


@bp.delete("/v1/glossaries/<glossary_id>")
def delete(glossary_id: str):  # type: ignore[no-untyped-def]
    if not (_ID.fullmatch(glossary_id) and store().delete(client_id(), glossary_id)):
        raise NotFound("no such glossary")
    return "", 204

"""Translation memories, owned by the client (its API key; with keys off, its address): POST /v1/memories imports a
TMX, TSV or CSV file for a language pair, GET /v1/memories lists the caller's, GET /v1/memories/<id> exports one
as TMX, DELETE removes it (another client's id is 404, as an unknown one); and what a job's
`translation_memory` finds at submission (memory_matches): exact matches answer their sentences there, before
the sentence cache (a human translation outranks a machine's). Fuzzy matches are looked up by the worker, off the
request path (worker.translation.round.job_work): a job's fuzzy lookups cost a few posting lists per sentence,
up to TRANSQ_MEMORY_FUZZY_MAX_SENTENCES sentences, which a request thread should not do for 10,000 of them."""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Response, request

from api.auth import client_id
from api.current import services
from api.memory_files import format_of, read_memory_file, write_tmx, xml_safe
from api.validation import TranslationRequest, read_body, read_form
from shared.errors import Conflict, NotFound, PayloadTooLarge, StorageQuotaExceeded, ValidationError
from shared.routing.routes import Route
from shared.store.memory_store import MemoryRefused, MemoryStore
from shared.store.sentence_cache import normalise

bp = Blueprint("memories", __name__)

_ID = re.compile(r"[0-9a-f]{32}")
_LANGUAGE = re.compile(r"[a-z]{2,3}")  # as TRANSQ_LANGUAGES names a pair's
_FORM_FIELDS_BYTES = 65536  # what the form's own fields (name, languages, boundaries) may add to the file


def store() -> MemoryStore:
    return services().memories


def owned(owner: str, memory_id: str, field: str = "translation_memory") -> Any:
    """The owner's memory of that id (renewed); 404 naming `field` when it has none of that id."""
    found = store().get(owner, memory_id) if _ID.fullmatch(memory_id) else None
    if found is None:
        raise NotFound(f"{field} {memory_id} names no translation memory of this API key")
    return found


def memory_matches(translation: TranslationRequest, route: Route | None, owner: str) -> tuple[list[str | None], dict]:
    """The job's sentences answered exactly by the memories it names (None: no exact match), and what the job
    record keeps of them (Job.memory). 404 for another key's (or no) memory, 422 for one of another pair."""
    ids = translation.translation_memory or []
    if not ids:
        return [None] * len(translation.sentences), {}
    memories = [owned(owner, memory_id) for memory_id in ids]
    pair = route.pair if route else ""
    for memory in memories:
        if memory.pair != pair:
            raise ValidationError(
                f"translation_memory {memory.id} is a {memory.pair} memory; this job is translated {pair or 'by no route'}"
            )
    sentences = [normalise(s) for s in translation.sentences]
    hits = store().exact(owner, ids, sentences)
    record = {
        "owner": owner,
        "ids": ids,
        "threshold": translation.translation_memory_threshold,
        "pair": pair,
        "hits": {str(i): target for i, target in enumerate(hits) if target is not None},
        "sources": sentences,
    }
    return hits, record


@bp.post("/v1/memories")
def create():  # type: ignore[no-untyped-def]
    """Import a memory: a multipart form with `file` (TMX, TSV or CSV), `source_lang`, `target_lang` and an
    optional `name` and `format` -> 201 and the memory (its entry count, and the units it skipped)."""
    settings = services().settings
    limit = settings.memory_max_bytes
    request.max_content_length = limit + _FORM_FIELDS_BYTES
    raw = read_body(request, limit + _FORM_FIELDS_BYTES, settings.request_timeout)
    form, data, filename = _form_of(raw)
    if len(data) > limit:
        raise PayloadTooLarge(f"the memory file is over the limit of {limit} bytes (TRANSQ_MEMORY_MAX_BYTES)")
    source, target = (_language(form, name) for name in ("source_lang", "target_lang"))
    name = form.get("name", filename or "").strip()
    if len(name) > 100:
        raise ValidationError("name has more than 100 characters")
    if not xml_safe(name) or "\n" in name or "\r" in name or "\t" in name:
        raise ValidationError("name holds a control character (its TMX export could not hold it)")
    read = read_memory_file(
        data, format_of(form.get("format"), filename), source, target, settings.memory_max_entries,
        settings.memory_max_entry_chars,
    )  # fmt: skip
    stored = store().create(client_id(), name, source, target, read.entries)
    if isinstance(stored, MemoryRefused):
        _refuse(stored)
    body = {**stored.summary(), "skipped": read.skipped}
    return body, 201, {"Location": f"/v1/memories/{stored.id}"}


def _form_of(raw: bytes) -> tuple[dict[str, str], bytes, str | None]:
    if request.mimetype != "multipart/form-data":
        raise ValidationError("send the memory as multipart/form-data: `file`, `source_lang`, `target_lang`")
    names = ("name", "format", "source_lang", "target_lang")
    fields, upload = read_form(request, raw, names, "the memory: TMX, TSV or CSV")
    return fields, upload.read(), upload.filename or None


def _language(form: dict[str, str], name: str) -> str:
    value = form.get(name, "").strip().lower()
    if not _LANGUAGE.fullmatch(value):
        raise ValidationError(f"{name} must be a language code such as zh or en")
    return value


def _refuse(refused: MemoryRefused) -> None:
    settings = services().settings
    if refused.reason == "full" and not refused.held:
        limit = settings.memory_max_stored
        raise Conflict(f"this client already stores {limit} translation memories (TRANSQ_MEMORY_MAX_STORED)")
    if refused.reason == "full":
        raise Conflict(
            f"the memory holds {refused.held} entries; at most {settings.memory_max_entries} are allowed "
            "(TRANSQ_MEMORY_MAX_ENTRIES)"
        )
    if refused.reason == "missing":
        raise NotFound("no such translation memory")
    raise StorageQuotaExceeded(
        f"this client holds {refused.held} bytes in the broker, and this memory would take it over its limit of "
        f"{settings.client_storage_bytes} (TRANSQ_CLIENT_STORAGE_BYTES): delete a memory or a glossary, or wait for "
        f"what it holds to expire, the first of it in {refused.retry_after}s",
        retry_after=min(refused.retry_after, 3600),
    )


@bp.get("/v1/memories")
def listing():  # type: ignore[no-untyped-def]
    """The caller's memories, oldest first, without their entries."""
    return {"memories": [stored.summary() for stored in store().list(client_id())]}


@bp.get("/v1/memories/<memory_id>")
def export(memory_id: str):  # type: ignore[no-untyped-def]
    """The memory as a TMX 1.4 file."""
    memory = owned(client_id(), memory_id, "memory")
    body = write_tmx(store().entries(client_id(), memory.id), memory.source_lang, memory.target_lang, memory.name)
    disposition = f'attachment; filename="memory-{memory.id}-{memory.pair}.tmx"'
    return Response(
        body, content_type="application/x-tmx+xml; charset=utf-8", headers={"Content-Disposition": disposition}
    )


@bp.delete("/v1/memories/<memory_id>")
def delete(memory_id: str):  # type: ignore[no-untyped-def]
    if not (_ID.fullmatch(memory_id) and store().delete(client_id(), memory_id)):
        raise NotFound("no such translation memory")
    return "", 204


def add_corrections(memory_id: str, sources: list[str], corrections: dict[int, str]) -> dict[str, Any]:
    """Store a job's corrected sentences (index -> target) in the caller's memory: (added, updated)."""
    settings = services().settings
    entries = {}
    for index, target in corrections.items():
        target = normalise(target)
        if not target or len(target) > settings.memory_max_entry_chars:
            raise ValidationError(
                f"corrections[{index}] must be 1 to {settings.memory_max_entry_chars} characters (TRANSQ_MEMORY_MAX_ENTRY_CHARS)"
            )
        if len(sources[index]) > settings.memory_max_entry_chars:
            raise ValidationError(f"sentence {index} is over TRANSQ_MEMORY_MAX_ENTRY_CHARS characters")
        entries[sources[index]] = target
    outcome = store().add(client_id(), memory_id, entries)
    if isinstance(outcome, MemoryRefused):
        _refuse(outcome)
    added, updated = outcome  # type: ignore[misc]
    return {"translation_memory": memory_id, "added": added, "updated": updated}

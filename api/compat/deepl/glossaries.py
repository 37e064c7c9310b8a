"""DeepL's glossaries (v2) as transq's stored glossaries (api.glossaries: owned by the API key, limited and
expiring as those are), each for the language pair it was made for: POST/GET /v2/glossaries, GET and DELETE
/v2/glossaries/<id>, GET /v2/glossaries/<id>/entries (TSV) and GET /v2/glossary-language-pairs."""

from __future__ import annotations

import csv
import io

from flask import Response

from api.auth import client_id
from api.compat.deepl.params import Params, deepl_code, language
from api.compat.deepl.shape import blueprint
from api.compat.languages import served_pairs
from api.current import services
from api.glossaries import refuse, store
from shared.errors import BadRequest, NotFound
from shared.store.glossary_store import GlossaryRefused, StoredGlossary
from shared.text.glossary import Glossary, GlossaryError

bp = blueprint("deepl_glossaries")
_ID_CHARS = set("0123456789abcdef")
MAX_NAME_CHARS = 100


@bp.post("/glossaries")
def create():  # type: ignore[no-untyped-def]
    """{"name", "source_lang", "target_lang", "entries", "entries_format": "tsv"|"csv"} -> 201 and its info."""
    params = Params.of_request()
    name = (params.text("name", required=True) or "").strip()
    if not name:
        raise BadRequest("Parameter 'name' not specified.")
    if len(name) > MAX_NAME_CHARS:
        raise BadRequest(f"Value for 'name' not supported: at most {MAX_NAME_CHARS} characters.")
    source = language(params.text("source_lang", required=True))
    target = language(params.text("target_lang", required=True))
    if (source, target) not in served_pairs():
        raise BadRequest(f"Unsupported glossary language pair {deepl_code(f'{source}-{target}')}.")
    entries_format = (params.text("entries_format") or "tsv").lower()
    if entries_format not in ("tsv", "csv"):
        raise BadRequest("Value for 'entries_format' not supported: tsv or csv.")
    terms = _entries(params.text("entries", required=True) or "", entries_format)
    try:
        glossary = Glossary.parse(terms, services().settings, "entries")
    except GlossaryError as exc:
        raise BadRequest(f"Invalid glossary entries: {exc}") from None
    stored = store().create(client_id(), name, glossary, (source, target))  # type: ignore[arg-type]
    if isinstance(stored, GlossaryRefused):
        refuse(stored)
    return _info(stored), 201  # type: ignore[arg-type]


def _entries(text: str, entries_format: str) -> dict[str, str]:
    """Source term -> target term of DeepL's TSV (source<TAB>target) or CSV (source,target[,languages])."""
    rows = csv.reader(io.StringIO(text), delimiter="\t" if entries_format == "tsv" else ",")
    terms: dict[str, str] = {}
    for number, row in enumerate(rows, start=1):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 2 or (entries_format == "tsv" and len(row) != 2):
            raise BadRequest(f"Invalid glossary entries: entry {number} is not a source and a target term.")
        source, target = row[0].strip(), row[1].strip()
        if any(ord(ch) < 32 for ch in source + target):  # a quoted CSV term may hold one; the TSV of it could not
            raise BadRequest(
                f"Invalid glossary entries: entry {number} holds a tab, a line break or a control character."
            )
        if source in terms:
            raise BadRequest(f"Invalid glossary entries: entry {number} duplicates the source term {source!r}.")
        terms[source] = target
    if not terms:
        raise BadRequest("Invalid glossary entries: there are none.")
    return terms


def _info(stored: StoredGlossary) -> dict[str, object]:
    source, target = stored.pair or ("", "")
    return {
        "glossary_id": stored.id,
        "name": stored.name,
        "ready": True,
        "source_lang": source,
        "target_lang": target,
        "creation_time": stored.created_at,
        "entry_count": len(stored.glossary),
    }


def _stored(glossary_id: str) -> StoredGlossary:
    found = store().get(client_id(), glossary_id) if len(glossary_id) == 32 and set(glossary_id) <= _ID_CHARS else None
    if found is None:
        raise NotFound("Glossary not found.")
    return found


@bp.get("/glossaries")
def listing():  # type: ignore[no-untyped-def]
    """The caller's glossaries (those made through /v1/glossaries too, with no language pair)."""
    return {"glossaries": [_info(stored) for stored in store().list(client_id())]}


@bp.get("/glossaries/<glossary_id>")
def read(glossary_id: str):  # type: ignore[no-untyped-def]
    return _info(_stored(glossary_id))


@bp.get("/glossaries/<glossary_id>/entries")
def entries(glossary_id: str):  # type: ignore[no-untyped-def]
    """The entries as TSV, DeepL's only format for them."""
    terms = _stored(glossary_id).glossary.as_dict()
    tsv = "".join(f"{source}\t{target}\n" for source, target in terms.items())
    return Response(tsv, content_type="text/tab-separated-values; charset=utf-8")


@bp.delete("/glossaries/<glossary_id>")
def delete(glossary_id: str):  # type: ignore[no-untyped-def]
    if not (len(glossary_id) == 32 and set(glossary_id) <= _ID_CHARS and store().delete(client_id(), glossary_id)):
        raise NotFound("Glossary not found.")
    return "", 204


@bp.get("/glossary-language-pairs")
def language_pairs():  # type: ignore[no-untyped-def]
    """Every served pair takes a glossary."""
    pairs = [{"source_lang": source, "target_lang": target} for source, target in served_pairs()]
    return {"supported_languages": pairs}

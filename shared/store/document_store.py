"""A document job's data in the broker: its source and its translated documents, compressed, in keys of
their own that live TRANSQ_DOCUMENT_TTL; and the two steps of the document stage (worker.documents.stage)
that move the job on: parsed and rendered. What its record holds of its document (its layout and file name)
is the job's own `document` (shared.store.job_record.DocumentRecord)."""

from __future__ import annotations

import json
import zlib
from typing import Any

import redis
from redis.client import NEVER_DECODE

from shared.settings import Settings
from shared.store.job_record import utc_now
from shared.store.job_scripts import PARSED, RENDERED
from shared.store.keys import Keys

_LEVEL = 1  # fast (the API compresses an upload on its request path): a few MB in tens of milliseconds


def compress(data: bytes) -> bytes:
    return zlib.compress(data, _LEVEL)


def decompress(data: bytes, limit: int) -> bytes:
    """At most `limit` bytes out (the data is transq's own, but never trust a size)."""
    inflater = zlib.decompressobj()
    out = inflater.decompress(data, limit + 1)
    if len(out) > limit or inflater.unconsumed_tail:
        raise ValueError(f"stored document data over {limit} bytes")
    return out


def pack_documents(documents: list[str] | list[bytes]) -> bytes:
    """Text documents as one JSON list; a .docx (always alone) as its bytes."""
    if documents and isinstance(documents[0], bytes):
        return compress(documents[0])  # type: ignore[arg-type]
    return compress(json.dumps(documents, ensure_ascii=False).encode())


def unpack_documents(data: bytes, fmt: str, limit: int) -> list[str | bytes]:
    raw = decompress(data, limit)
    return [raw] if fmt == "docx" else json.loads(raw)


class DocumentStore:
    """Reads a document job's stored data; moves it on once parsed or rendered (one atomic script each)."""

    def __init__(self, client: redis.Redis, keys: Keys, settings: Settings):
        self.client, self.keys, self.settings = client, keys, settings
        self._parsed = client.register_script(PARSED)
        self._rendered = client.register_script(RENDERED)

    def source(self, job_id: str) -> bytes | None:
        return self._compressed(self.keys.document_source(job_id))

    def output(self, job_id: str) -> bytes | None:
        return self._compressed(self.keys.document_output(job_id))

    def translated(self, job_id: str, fmt: str) -> list[str | bytes] | None:
        """A rendered job's translated documents, one per source; None once they have expired."""
        packed = self.output(job_id)
        if packed is None:
            return None
        return unpack_documents(packed, fmt, self.settings.max_document_bytes * 64)

    def parsed(
        self,
        job_id: str,
        route: str,
        units: list[str],
        sentences: int,
        cached: int,
        layout: dict[str, Any],
        fields: dict[str, str] | None = None,
    ) -> bool:
        """The job, parsed, joins its route's queue with the document's units as its texts (and `fields` in its
        record: the route and model the stage chose for it, its detected language)."""
        args: list[Any] = [
            job_id,
            self.settings.job_ttl,
            json.dumps(units, ensure_ascii=False),
            sentences,
            cached,
            json.dumps(layout, ensure_ascii=False),
        ]
        for pair in (fields or {}).items():
            args.extend(pair)
        return bool(self._parsed(keys=[self.keys.job(job_id), self.keys.pending(route)], args=args))

    def rendered(self, job_id: str, packed: bytes, fields: dict[str, str]) -> bool:
        """The job succeeds with its translated documents (`packed`, see pack_documents)."""
        document_ttl = self.settings.document_ttl
        args: list[Any] = [job_id, utc_now(), packed, document_ttl, min(document_ttl, self.settings.result_ttl)]
        for pair in fields.items():
            args.extend(pair)
        keys = [self.keys.job(job_id), self.keys.document_output(job_id), self.keys.document_source(job_id)]
        keys.append(self.keys.callbacks_due)
        return bool(self._rendered(keys=keys, args=args))

    def _compressed(self, key: str) -> bytes | None:
        """A key's bytes as stored (the broker's client decodes every other answer)."""
        return self.client.execute_command("GET", key, **{NEVER_DECODE: True})

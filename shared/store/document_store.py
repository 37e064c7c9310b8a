"""A document job's data in the broker: its source and its translated documents, compressed, in keys of
their own that live TRANSQ_DOCUMENT_TTL; and the two steps of the document stage (worker.documents.stage)
that move the job on: parsed and rendered. What its record holds of its document (its layout and file name)
is the job's own `document` (shared.store.job_record.DocumentRecord)."""

from __future__ import annotations

import json
import zlib

import redis
from redis.client import NEVER_DECODE

from shared.document_formats import FILE_FORMATS
from shared.settings import Settings
from shared.store.job_events import Sentences
from shared.store.job_record import JOB_HASH, Job, utc_now
from shared.store.job_scripts import PARSED, RENDERED
from shared.store.keys import Keys

# What a parse gives a document job's record: the document's units as its texts and where their sentences
# are (spans), its sentences (those the
# cache answered are done), its layout with each document's units, and its route (with its model and the
# language detected, when the stage chose it).
PARSED_FIELDS = (
    "texts",
    "spans",
    "sentences_total",
    "sentences_done",
    "cached_sentences",
    "document",
    "route",
    "model",
    "detected",
)
# What rendering writes: the parse's (unchanged when the job was parsed before; its texts and their sentence
# spans go) and the scores.
RENDERED_FIELDS = tuple(name for name in PARSED_FIELDS if name not in ("texts", "spans")) + ("scores", "fidelity")

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
    """Text documents as one JSON list; a file format's document (always alone) as its bytes."""
    if documents and isinstance(documents[0], bytes):
        return compress(documents[0])  # type: ignore[arg-type]
    return compress(json.dumps(documents, ensure_ascii=False).encode())


def unpack_documents(data: bytes, fmt: str, limit: int) -> list[str | bytes]:
    raw = decompress(data, limit)
    return [raw] if fmt in FILE_FORMATS else json.loads(raw)


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

    def parsed(self, job: Job, fence: int | None = None, cached: Sentences | None = None) -> bool:
        """The job, parsed (its PARSED_FIELDS as the stage set them), joins its route's queue, the sentences
        the cache answered (`cached`) recorded with their events; False when it no longer waits for its parse,
        or a stage took it since `fence` (its take's; None: any)."""
        partial, events = (cached.partial_fields(), cached.events()) if cached else ([], [])
        args: list[object] = [job.id, self.settings.job_ttl, "" if fence is None else fence, len(partial), len(events)]
        args += partial + events
        for pair in _fields(job, PARSED_FIELDS).items():
            args.extend(pair)
        keys = [
            self.keys.job(job.id),
            self.keys.pending(job.route),
            self.keys.events(job.id),
            self.keys.partial(job.id),
        ]
        return bool(self._parsed(keys=keys, args=args))

    def rendered(self, job: Job, packed: bytes, fence: int | None = None, cached: Sentences | None = None) -> bool:
        """The job succeeds with its translated documents (`packed`, see pack_documents) and its RENDERED_FIELDS,
        with the events of its sentences the cache answered (`cached`: all of them, rendered at once); False as
        parsed() says."""
        document_ttl = self.settings.document_ttl
        args: list[object] = [job.id, utc_now(), packed, document_ttl, min(document_ttl, self.settings.result_ttl)]
        events = cached.events() if cached else []
        args += ["" if fence is None else fence, len(events), *events]
        for pair in _fields(job, RENDERED_FIELDS).items():
            args.extend(pair)
        keys = [self.keys.job(job.id), self.keys.document_output(job.id), self.keys.document_source(job.id)]
        keys += [self.keys.callbacks_due, self.keys.events(job.id)]
        return bool(self._rendered(keys=keys, args=args))

    def _compressed(self, key: str) -> bytes | None:
        """A key's bytes as stored (the broker's client decodes every other answer)."""
        return self.client.execute_command("GET", key, **{NEVER_DECODE: True})


def _fields(job: Job, names: tuple[str, ...]) -> dict[str, str]:
    return JOB_HASH.encode_values(**{name: getattr(job, name) for name in names})

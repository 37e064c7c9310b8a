"""Translation memories in the broker Redis (POST/GET/DELETE /v1/memories, a job's `translation_memory`): each
under its owner (an API key's id, else its address), at most TRANSQ_MEMORY_MAX_STORED per owner. A memory is a
hash of what it is (name, languages, counts, its bytes) and three hashes of its entries: `:x` the digest of an
entry's normalised source -> its number (the exact lookup, one HMGET per memory and job), `:e` number ->
[source, target], and `:g` character bigram -> the numbers of the entries holding it (the fuzzy lookup reads a
few short posting lists per sentence, never the whole memory: shared.text.memory_matching). It lives
TRANSQ_MEMORY_TTL from its import, last correction or last use, and counts meanwhile against its owner's
TRANSQ_CLIENT_STORAGE_BYTES in the account jobs and glossaries count in (entries `<id>:m:<bytes>`)."""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import redis

from shared.cooperation import let_others_run
from shared.settings import Settings
from shared.store.job_record import new_job_id, utc_now
from shared.store.keys import Keys
from shared.store.memory_scripts import ADD, CREATE, DELETE, READ
from shared.text import memory_matching

_PARTS = ("", ":x", ":e", ":g")
_CHUNK = 5000  # fields per HSET while an import is written
_CHUNK_BYTES = 1 << 20  # and bytes: a posting list of a common bigram holds tens of thousands of numbers
_YIELD_EVERY = 1000  # entries prepared, or exported, between two chances for other requests to run


@dataclass(frozen=True)
class MemoryRefused:
    """A memory (or a correction) not stored: 'full' (TRANSQ_MEMORY_MAX_STORED memories, or, `held`, a memory at
    TRANSQ_MEMORY_MAX_ENTRIES), 'over_quota' (what the owner holds, when the first of it expires), 'missing'."""

    reason: str
    held: int = 0
    retry_after: int = 0


@dataclass(frozen=True)
class StoredMemory:
    id: str
    name: str
    source_lang: str
    target_lang: str
    entries: int
    bytes: int
    created_at: str
    updated_at: str

    @property
    def pair(self) -> str:
        return f"{self.source_lang}-{self.target_lang}"

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "source_lang": self.source_lang,
            "target_lang": self.target_lang,
            "entry_count": self.entries,
            "bytes": self.bytes,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


def entry_digest(sentence: str) -> str:
    """An entry's key in the exact index: its normalised source's digest (normalise first: sentence_cache)."""
    return hashlib.sha256(sentence.encode("utf-8")).hexdigest()[:32]


def _entry_fields(source: str, target: str) -> tuple[str, str, str, int]:
    """An entry as the ADD script takes it: digest, JSON, bigrams, and about the bytes it adds (its fields, and a
    number in the posting list of each of its bigrams)."""
    value = json.dumps([source, target], ensure_ascii=False)
    grams = " ".join(memory_matching.grams(source))
    return entry_digest(source), value, grams, 64 + len(value.encode()) + 2 * len(grams.encode())


class MemoryStore:
    def __init__(self, client: redis.Redis, keys: Keys, settings: Settings):
        self.client = client
        self.keys = keys
        self.max_stored = settings.memory_max_stored
        self.max_entries = settings.memory_max_entries
        self.ttl = settings.memory_ttl
        self.storage_limit = settings.client_storage_bytes  # 0: not accounted
        self._create = client.register_script(CREATE)
        self._read = client.register_script(READ)
        self._delete = client.register_script(DELETE)
        self._add = client.register_script(ADD)

    def _keys(self, owner: str, memory_id: str) -> list[str]:
        return [self.keys.memory(owner, memory_id), self.keys.memories(owner), self.keys.usage(owner)]

    def create(
        self, owner: str, name: str, source_lang: str, target_lang: str, entries: dict[str, str]
    ) -> StoredMemory | MemoryRefused:
        """Store a new memory of these (normalised) entries, or say why not (nothing is written then)."""
        memory_id, now = new_job_id(), utc_now()
        exact, values, postings, size = {}, {}, defaultdict(list), 256
        for number, (source, target) in enumerate(entries.items()):
            digest, value, grams, bytes_ = _entry_fields(source, target)
            key = str(number)
            exact[digest], values[key] = key, value
            for gram in grams.split(" ") if grams else ():
                postings[gram].append(key)
            size += bytes_
            if number % _YIELD_EVERY == 0:
                let_others_run()
        meta = {"name": name, "source_lang": source_lang, "target_lang": target_lang, "created_at": now}
        meta.update(updated_at=now, entries="0", next=str(len(entries)))  # its entries: with them, below
        keys = [self.keys.memories(owner), self.keys.memory(owner, memory_id), self.keys.usage(owner)]
        args: list[Any] = [self.max_stored, memory_id, self.ttl, self.storage_limit, size]
        outcome, *found = self._create(keys=keys, args=args + [v for pair in meta.items() for v in pair])
        if outcome != "created":
            return MemoryRefused(outcome, *(int(value) for value in found))
        base = self.keys.memory(owner, memory_id)
        try:
            self._write_entries(base, len(entries), exact, values, postings)
        except redis.RedisError:
            self.delete(owner, memory_id)
            raise
        return StoredMemory(memory_id, name, source_lang, target_lang, len(entries), size, now, now)

    def _write_entries(self, base: str, count: int, *hashes: dict[str, str] | dict[str, list[str]]) -> None:
        """The entries' three hashes (a posting list: its numbers joined), expiring with the memory's hash, then
        their count (a memory whose import was cut off before shows 0 entries). Written a chunk per round trip,
        other requests run between: one transaction of 100,000 entries was packed in one go, seconds during which
        the API's gevent worker served nobody (bench.memory_import). Nobody reads the entries meanwhile: the
        memory's id is the import's answer."""
        expiry = int(time.time()) + self.ttl
        for part, mapping in zip(_PARTS[1:], hashes):
            for chunk in _chunks(mapping):
                pipe = self.client.pipeline(transaction=False)
                pipe.hset(base + part, mapping=chunk)
                pipe.expireat(base + part, expiry)
                pipe.execute()
                let_others_run()
        self.client.hset(base, "entries", count)

    def get(self, owner: str, memory_id: str) -> StoredMemory | None:
        """The owner's memory of that id, renewed (it lives TRANSQ_MEMORY_TTL from now)."""
        found = self._read(keys=self._keys(owner, memory_id), args=[memory_id, self.ttl, self.storage_limit])
        return _load(memory_id, dict(zip(found[0::2], found[1::2]))) if found else None

    def list(self, owner: str) -> list[StoredMemory]:
        """The owner's memories, oldest first (none renewed)."""
        ids = self.client.zrange(self.keys.memories(owner), 0, -1)
        pipe = self.client.pipeline(transaction=False)
        for memory_id in ids:
            pipe.hgetall(self.keys.memory(owner, memory_id))
        return [found for i, raw in zip(ids, pipe.execute() if ids else []) if (found := _load(i, raw))]

    def delete(self, owner: str, memory_id: str) -> bool:
        """False when the owner has no memory of that id."""
        return bool(self._delete(keys=self._keys(owner, memory_id), args=[memory_id]))

    def entries(self, owner: str, memory_id: str) -> Iterator[tuple[str, str]]:
        """Every entry of the memory, in the order they were added (an export: TRANSQ_MEMORY_MAX_ENTRIES at most),
        read a thousand at a time, other requests run between (under gevent, the API)."""
        base = self.keys.memory(owner, memory_id)
        last = int(self.client.hget(base, "next") or 0)
        for start in range(0, last, _YIELD_EVERY):
            found = self.client.hmget(base + ":e", [str(n) for n in range(start, min(last, start + _YIELD_EVERY))])
            yield from (tuple(json.loads(value)) for value in found if value)  # type: ignore[misc]
            let_others_run()

    def add(self, owner: str, memory_id: str, entries: dict[str, str]) -> tuple[int, int] | MemoryRefused:
        """Add (or correct) entries, source (normalised) -> target: (added, updated), or why not."""
        args: list[Any] = [memory_id, self.ttl, self.storage_limit, self.max_entries, utc_now()]
        for source, target in entries.items():
            args.extend(_entry_fields(source, target))
        outcome, *found = self._add(keys=self._keys(owner, memory_id), args=args)
        if outcome != "added":
            return MemoryRefused(outcome, *(int(value) for value in found))
        return int(found[0]), int(found[1])

    def exact(self, owner: str, memory_ids: Sequence[str], sentences: Sequence[str]) -> list[str | None]:
        """Each (normalised) sentence's target in the first of these memories that holds it exactly, else None:
        two round trips whatever the number of sentences."""
        digests = [entry_digest(s) for s in sentences]
        if not digests or not memory_ids:
            return [None] * len(sentences)
        pipe = self.client.pipeline(transaction=False)
        for memory_id in memory_ids:
            pipe.hmget(self.keys.memory(owner, memory_id) + ":x", digests)
        numbers = pipe.execute()
        where: list[tuple[str, str] | None] = [None] * len(sentences)
        for memory_id, found in zip(memory_ids, numbers):
            for i, number in enumerate(found):
                if where[i] is None and number is not None:
                    where[i] = (memory_id, number)
        for memory_id in memory_ids:
            pipe.hmget(
                self.keys.memory(owner, memory_id) + ":e", [w[1] for w in where if w and w[0] == memory_id] or ["-"]
            )
        values = {memory_id: iter(found) for memory_id, found in zip(memory_ids, pipe.execute())}
        targets = [next(values[w[0]]) if w else None for w in where]
        return [json.loads(t)[1] if t else None for t in targets]

    def suggestions(
        self, owner: str, memory_ids: Sequence[str], sentences: Sequence[str], threshold: float
    ) -> list[list[dict[str, Any]]]:
        """Each sentence's fuzzy matches at or above `threshold` in these memories (shared.text.memory_matching):
        per memory three round trips for all the sentences, each sentence reading a few short posting lists."""
        found: list[list[tuple[str, str]]] = [[] for _ in sentences]
        sentence_grams = [memory_matching.grams(s) for s in sentences]
        every = sorted(set().union(*sentence_grams)) if sentences else []
        for memory_id in memory_ids:
            base = self.keys.memory(owner, memory_id)
            pipe = self.client.pipeline(transaction=False)
            for gram in every:
                pipe.hstrlen(base + ":g", gram)
            sizes = dict(zip(every, pipe.execute())) if every else {}
            chosen = [memory_matching.chosen_grams(g, sizes) for g in sentence_grams]
            wanted = sorted(set().union(*chosen)) if chosen else []
            postings = dict(zip(wanted, self.client.hmget(base + ":g", wanted))) if wanted else {}
            lists = {g: (p or "").split() for g, p in postings.items()}
            picks = [memory_matching.candidates(lists[g] for g in c) for c in chosen]
            numbers = sorted({n for p in picks for n in p})
            values = dict(zip(numbers, self.client.hmget(base + ":e", numbers))) if numbers else {}
            for i, pick in enumerate(picks):
                found[i].extend(tuple(json.loads(values[n])) for n in pick if values.get(n))  # type: ignore[misc]
        return [memory_matching.best(s, entries, threshold) for s, entries in zip(sentences, found)]


def _chunks(mapping: dict[str, str] | dict[str, list[str]]) -> Iterator[dict[str, str]]:
    """The mapping in HSETs of at most _CHUNK fields or about _CHUNK_BYTES (a list value: joined by spaces)."""
    chunk: dict[str, str] = {}
    size = 0
    for key, value in mapping.items():
        text = value if isinstance(value, str) else " ".join(value)
        chunk[key] = text
        size += len(key) + len(text)
        if len(chunk) >= _CHUNK or size >= _CHUNK_BYTES:
            yield chunk
            chunk, size = {}, 0
    if chunk:
        yield chunk


def _load(memory_id: str, record: dict[str, str]) -> StoredMemory | None:
    if not record or "entries" not in record:
        return None
    return StoredMemory(
        memory_id,
        record.get("name", ""),
        record.get("source_lang", ""),
        record.get("target_lang", ""),
        int(record["entries"]),
        int(record.get("bytes", 0)),
        record.get("created_at", ""),
        record.get("updated_at", ""),
    )

"""Stored glossaries in the broker Redis (POST/GET/DELETE /v1/glossaries): each under its owner (an API
key's digest; '' with keys off), at most TRANSQ_GLOSSARY_MAX_STORED per owner, checked and written in one
atomic script so concurrent creations cannot pass the cap. They do not expire: a client deletes them."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import redis

from shared.store.job_record import new_job_id, utc_now
from shared.store.keys import Keys
from shared.text.glossary import Glossary

# KEYS: the owner's index, the record. ARGV: the cap, the id, the time, the record. 1: stored; 0: at the cap.
_CREATE = """
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
return 1
"""


@dataclass(frozen=True)
class StoredGlossary:
    id: str
    name: str
    glossary: Glossary
    created_at: str

    def summary(self) -> dict[str, Any]:
        """What a listing shows: everything but the terms."""
        return {
            "id": self.id,
            "name": self.name,
            "term_count": len(self.glossary),
            "digest": self.glossary.digest,
            "created_at": self.created_at,
        }

    def public(self) -> dict[str, Any]:
        return {**self.summary(), "terms": self.glossary.as_dict()}


class GlossaryStore:
    def __init__(self, client: redis.Redis, keys: Keys, max_stored: int):
        self.client = client
        self.keys = keys
        self.max_stored = max_stored
        self._create = client.register_script(_CREATE)

    def create(self, owner: str, name: str, glossary: Glossary) -> StoredGlossary | None:
        """Store a new glossary; None when the owner already holds max_stored."""
        stored = StoredGlossary(new_job_id(), name, glossary, utc_now())
        record = json.dumps(
            {"name": name, "terms": glossary.as_dict(), "created_at": stored.created_at}, ensure_ascii=False
        )
        keys = [self.keys.glossaries(owner), self.keys.glossary(owner, stored.id)]
        created = self._create(keys=keys, args=[self.max_stored, stored.id, time.time(), record])
        return stored if created == 1 else None

    def get(self, owner: str, glossary_id: str) -> StoredGlossary | None:
        return _load(glossary_id, self.client.get(self.keys.glossary(owner, glossary_id)))

    def list(self, owner: str) -> list[StoredGlossary]:
        """The owner's glossaries, oldest first."""
        ids = self.client.zrange(self.keys.glossaries(owner), 0, -1)
        records = self.client.mget([self.keys.glossary(owner, i) for i in ids]) if ids else []
        return [found for i, raw in zip(ids, records) if (found := _load(i, raw)) is not None]

    def delete(self, owner: str, glossary_id: str) -> bool:
        """False when the owner has no glossary of that id."""
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(self.keys.glossary(owner, glossary_id))
        pipe.zrem(self.keys.glossaries(owner), glossary_id)
        deleted, _ = pipe.execute()
        return bool(deleted)


def _load(glossary_id: str, raw: str | None) -> StoredGlossary | None:
    if raw is None:
        return None
    record = json.loads(raw)
    return StoredGlossary(glossary_id, record["name"], Glossary.of(record["terms"]), record["created_at"])

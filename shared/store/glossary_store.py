"""Stored glossaries in the broker Redis (POST/GET/DELETE /v1/glossaries): each under its owner (the client:
an API key's id, else its address), at most TRANSQ_GLOSSARY_MAX_STORED per owner, checked and written in one
atomic script so concurrent creations cannot pass the cap. Each lives TRANSQ_GLOSSARY_TTL seconds from when
it was stored or last read (GET, or a request naming it) and counts meanwhile against its owner's
TRANSQ_CLIENT_STORAGE_BYTES, in the account its jobs count in (shared.store.job_scripts, USAGE: entries
`<id>:g:<bytes>`), until it expires or is deleted."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import redis

from shared.settings import Settings
from shared.store.job_record import new_job_id, utc_now
from shared.store.job_scripts import USAGE
from shared.store.keys import Keys
from shared.text.glossary import Glossary

# hold(record, id, usage set ('': not accounted), expiry): the record lives until `expiry` and its owner's
# account holds its bytes (256 + its length) until then; renewing moves its entry's expiry.
_HOLD = """
local function hold(record, id, z, expiry)
  redis.call('EXPIREAT', record, expiry)
  if z == '' then return end
  local size = 256 + redis.call('STRLEN', record)
  local member = id .. ':g:' .. size
  if not redis.call('ZSCORE', z, member) then redis.call('INCRBY', z .. ':bytes', size) end
  redis.call('ZADD', z, expiry, member)
  local last = math.ceil(tonumber(redis.call('ZRANGE', z, -1, -1, 'WITHSCORES')[2])) + 1
  redis.call('EXPIREAT', z, last)
  redis.call('EXPIREAT', z .. ':bytes', last)
end
local function account(limit, z) return tonumber(limit) > 0 and z or '' end
"""

# KEYS: the owner's index, the record, the owner's usage set. ARGV: the cap, the id, the time, the record,
# the ttl, the storage limit (0: not accounted). {'created'}; {'full'} at the cap (ids whose glossary expired
# leave the index first; one stored before glossaries expired gets its ttl and is accounted); over the
# storage limit (unless the owner holds nothing) {'over_quota', <bytes held>, <seconds until the first of it
# expires>}. Nothing of the new glossary is written unless it is created.
_CREATE = (
    USAGE
    + _HOLD
    + """
local now = now_seconds()
local expiry = now + tonumber(ARGV[5])
local z = account(ARGV[6], KEYS[3])
local prefix = string.sub(KEYS[2], 1, #KEYS[2] - #ARGV[2])
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local ttl = redis.call('TTL', prefix .. id)
  if ttl == -2 then redis.call('ZREM', KEYS[1], id) elseif ttl == -1 then hold(prefix .. id, id, z, expiry) end
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return {'full'} end
if z ~= '' then
  usage_release(z, now)
  local held = tonumber(redis.call('GET', z .. ':bytes') or '0')
  if held > 0 and held + 256 + #ARGV[4] > tonumber(ARGV[6]) then
    local first = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
    return {'over_quota', held, math.max(1, math.ceil(tonumber(first[2] or now) - now))}
  end
end
redis.call('SET', KEYS[2], ARGV[4])
hold(KEYS[2], ARGV[2], z, expiry)
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('EXPIREAT', KEYS[1], expiry)
return {'created'}
"""
)

# KEYS: the record, the owner's index, the owner's usage set. ARGV: the id, the ttl, the storage limit. The
# record (nil when there is none), renewed: it, its index and its account entry live `ttl` more seconds.
_READ = (
    USAGE
    + _HOLD
    + """
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local expiry = now_seconds() + tonumber(ARGV[2])
hold(KEYS[1], ARGV[1], account(ARGV[3], KEYS[3]), expiry)
redis.call('EXPIREAT', KEYS[2], expiry)
return raw
"""
)

# KEYS: the record, the owner's index, the owner's usage set. ARGV: the id. 1 when it was there (its bytes
# leave its owner's account), else 0.
_DELETE = """
local size = 256 + redis.call('STRLEN', KEYS[1])
local member = ARGV[1] .. ':g:' .. size
if redis.call('ZSCORE', KEYS[3], member) then
  redis.call('DECRBY', KEYS[3] .. ':bytes', size)
  redis.call('ZREM', KEYS[3], member)
end
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[1])
"""


@dataclass(frozen=True)
class GlossaryRefused:
    """A glossary not stored: its owner holds TRANSQ_GLOSSARY_MAX_STORED already ('full'), or it would take
    the owner over TRANSQ_CLIENT_STORAGE_BYTES ('over_quota': what it holds, and when the first of it
    expires)."""

    reason: str
    held: int = 0
    retry_after: int = 0


@dataclass(frozen=True)
class StoredGlossary:
    id: str
    name: str
    glossary: Glossary
    created_at: str
    pair: tuple[str, str] | None = None  # (source, target) where it was made for one pair (DeepL's glossaries are)

    def summary(self) -> dict[str, Any]:
        """What a listing shows: everything but the terms."""
        languages = {"source_lang": self.pair[0], "target_lang": self.pair[1]} if self.pair else {}
        return {
            "id": self.id,
            "name": self.name,
            "term_count": len(self.glossary),
            "digest": self.glossary.digest,
            "created_at": self.created_at,
            **languages,
        }

    def public(self) -> dict[str, Any]:
        return {**self.summary(), "terms": self.glossary.as_dict()}


class GlossaryStore:
    def __init__(self, client: redis.Redis, keys: Keys, settings: Settings):
        self.client = client
        self.keys = keys
        self.max_stored = settings.glossary_max_stored
        self.ttl = settings.glossary_ttl
        self.storage_limit = settings.client_storage_bytes  # 0: not accounted
        self._create = client.register_script(_CREATE)
        self._read = client.register_script(_READ)
        self._delete = client.register_script(_DELETE)

    def create(
        self, owner: str, name: str, glossary: Glossary, pair: tuple[str, str] | None = None
    ) -> StoredGlossary | GlossaryRefused:
        """Store a new glossary (for one language `pair`, if given), or say why not (nothing is written then)."""
        stored = StoredGlossary(new_job_id(), name, glossary, utc_now(), pair)
        fields = {"name": name, "terms": glossary.as_dict(), "created_at": stored.created_at}
        record = json.dumps({**fields, "pair": list(pair)} if pair else fields, ensure_ascii=False)
        keys = [self.keys.glossaries(owner), self.keys.glossary(owner, stored.id), self.keys.usage(owner)]
        args = [self.max_stored, stored.id, time.time(), record, self.ttl, self.storage_limit]
        outcome, *found = self._create(keys=keys, args=args)
        if outcome == "created":
            return stored
        return GlossaryRefused(outcome, *(int(value) for value in found))

    def get(self, owner: str, glossary_id: str) -> StoredGlossary | None:
        """The owner's glossary of that id, renewed (it lives TRANSQ_GLOSSARY_TTL from now)."""
        keys = [self.keys.glossary(owner, glossary_id), self.keys.glossaries(owner), self.keys.usage(owner)]
        return _load(glossary_id, self._read(keys=keys, args=[glossary_id, self.ttl, self.storage_limit]))

    def list(self, owner: str) -> list[StoredGlossary]:
        """The owner's glossaries, oldest first (none renewed)."""
        ids = self.client.zrange(self.keys.glossaries(owner), 0, -1)
        records = self.client.mget([self.keys.glossary(owner, i) for i in ids]) if ids else []
        return [found for i, raw in zip(ids, records) if (found := _load(i, raw)) is not None]

    def delete(self, owner: str, glossary_id: str) -> bool:
        """False when the owner has no glossary of that id."""
        keys = [self.keys.glossary(owner, glossary_id), self.keys.glossaries(owner), self.keys.usage(owner)]
        return bool(self._delete(keys=keys, args=[glossary_id]))


def _load(glossary_id: str, raw: str | None) -> StoredGlossary | None:
    if raw is None:
        return None
    record = json.loads(raw)
    pair = tuple(record["pair"]) if record.get("pair") else None
    return StoredGlossary(glossary_id, record["name"], Glossary.of(record["terms"]), record["created_at"], pair)  # type: ignore[arg-type]

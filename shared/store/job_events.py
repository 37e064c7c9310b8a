"""A job's events in Redis: a stream beside its record (shared.store.keys.Keys.events) that the scripts which
record a job's sentences and move its status append to in the same atomic call (EMIT), so an event never
announces what is not recorded and nothing recorded lacks its event; any API process reads it
(api.job_events serves it as Server-Sent Events). The events' shapes are the contract's
(shared.contract.events); the slots that bound how many streams one client holds open are here too."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import redis

from shared.store.keys import Keys
from shared.store.sentence_cache import CacheAnswer

EVENT_ID_PATTERN = "^[0-9]{1,20}-[0-9]{1,20}$"  # a stream entry's id: what Last-Event-ID must be
_EVENT_ID = re.compile(EVENT_ID_PATTERN)

# Lua, shared by the scripts that emit: emit(job key, stream key, kind, data) appends one event and gives the
# stream the job's remaining time to live (so it goes with the job: call it after the job's EXPIRE);
# emit_progress(job, stream) appends the job's status and progress as its record now holds them. A stream holds
# at most twice the job's sentences and 32 entries more: one event per sentence, at most one progress event per
# recording of new sentences, and the status moves (takeovers included), so nothing a client may still ask for
# is trimmed.
EMIT = """
local function emit(job, stream, kind, data)
  local total = tonumber(redis.call('HGET', job, 'sentences_total') or '0') or 0
  redis.call('XADD', stream, 'MAXLEN', 2 * total + 32, '*', 'e', kind, 'd', data)
  local ttl = redis.call('PTTL', job)
  if ttl > 0 then redis.call('PEXPIRE', stream, ttl) end
end
local function emit_progress(job, stream)
  local f = redis.call('HMGET', job, 'status', 'sentences_done', 'sentences_total')
  if not f[1] then return end
  local data = cjson.encode({status = f[1], sentences_done = tonumber(f[2] or '0') or 0,
    sentences_total = tonumber(f[3] or '0') or 0})
  emit(job, stream, 'progress', data)
end
"""


SCORE_PREFIX = "s"  # a partial hash's field of a sentence's score: s<index> (its translation's field: <index>)
FIDELITY_PREFIX = "f"  # a partial hash's field of a sentence's fidelity record (JSON): f<index>


def is_event_id(value: str) -> bool:
    return _EVENT_ID.fullmatch(value) is not None


@dataclass(frozen=True)
class Sentences:
    """Translated sentences of a job, by sentence index, and the scores and fidelity records (shared.text.fidelity)
    of those that have one, as they are recorded: in its partial hash while it runs (partial_fields), each with its
    `sentence` event (events)."""

    translations: dict[int, str]
    scores: dict[int, float] | None = None
    fidelity: dict[int, dict] | None = None

    @classmethod
    def answered(cls, cached: CacheAnswer, want_scores: bool) -> Sentences:
        """The sentences the cache answered (at submission, or when a document is parsed), with their scores when
        the job asked for them."""
        translations = {i: t for i, t in enumerate(cached.translations) if t is not None}
        if not want_scores:
            return cls(translations)
        return cls(translations, {i: s for i, s in enumerate(cached.scores or []) if s is not None})

    def partial_fields(self) -> list[object]:
        """The partial hash's field/value pairs: <index> translation, s<index> score, f<index> fidelity."""
        pairs: list[object] = []
        for index, translation in self.translations.items():
            pairs += [index, translation]
        for index, score in (self.scores or {}).items():
            pairs += [f"{SCORE_PREFIX}{index}", repr(score)]
        for index, checked in (self.fidelity or {}).items():
            pairs += [f"{FIDELITY_PREFIX}{index}", json.dumps(checked, separators=(",", ":"))]
        return pairs

    def events(self) -> list[str]:
        scores, fidelity = self.scores or {}, self.fidelity or {}
        return [sentence_event(i, t, scores.get(i), fidelity.get(i)) for i, t in self.translations.items()]


def sentence_event(index: int, translation: str, score: float | None = None, fidelity: dict | None = None) -> str:
    """A `sentence` event's data (shared.contract.events.SentenceEvent): the job's sentence at `index` (its
    position among all the job's sentences, texts in order), its translation and, where known, its score and
    its fidelity record."""
    data: dict[str, object] = {"index": index, "translation": translation}
    if score is not None:
        data["score"] = score
    if fidelity is not None:
        data["fidelity"] = fidelity
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Event:
    """One event as stored: its stream id (an SSE `id:`), kind and data (JSON)."""

    id: str
    kind: str
    data: str


# KEYS: the client's slot set. ARGV: slot, deadline (Redis time, ms), limit. Expired slots (their holder's
# process died) go; 1 when the slot is taken or refreshed, 0 when the client holds `limit` others.
_TAKE_SLOT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
"""


class JobEvents:
    """Read a job's events, and hold a client's event-stream slots."""

    def __init__(self, client: redis.Redis, keys: Keys):
        self.client = client
        self.keys = keys
        self._take_slot = client.register_script(_TAKE_SLOT)

    def read(self, job_id: str, after: str, block_ms: int, count: int = 100) -> list[Event]:
        """Up to `count` of the job's events after the id `after` ('0': from the start), waiting at most
        `block_ms` for one when there are none yet (0: not at all)."""
        found = self.client.xread({self.keys.events(job_id): after}, count=count, block=block_ms or None)
        return [
            Event(entry_id, fields.get("e", ""), fields.get("d", "{}"))
            for _, entries in found or []
            for entry_id, fields in entries
        ]

    def take_slot(self, client_id: str, slot: str, hold_ms: int, limit: int) -> bool:
        """Take (or refresh for `hold_ms`) one of `limit` concurrent streams for `client_id`; False when all
        are held. A slot not refreshed lapses, so a stream whose process died frees it."""
        key = self.keys.event_streams(client_id)
        return bool(self._take_slot(keys=[key], args=[slot, hold_ms, limit]))

    def free_slot(self, client_id: str, slot: str) -> None:
        self.client.zrem(self.keys.event_streams(client_id), slot)

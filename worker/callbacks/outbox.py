"""The callback outbox in Redis: the due set (shared.store.keys Keys.callbacks_due) that the scripts making a job
final fill (shared.store.job_scripts _OUTBOX), taken with a lease and settled on the job's record.

A deliverer peeks at the entries due and takes those it chooses (worker.callbacks.slots: one receiver or one
API key gets only so many senders at once); one it leaves is deferred, uncounted, and woken when a sender of
its receiver or key is free again.

Taking an entry counts an attempt (`callback_attempts`, its token) and moves the entry to its lease's end:
no other deliverer takes it meanwhile, and a deliverer killed mid-attempt has its entry taken again once
the lease ends (at least once). Settling is fenced by the token: a deliverer that overran its lease writes
nothing once another took the entry. Every time is Redis's (no clock skew between deliverers)."""

from __future__ import annotations

from dataclasses import dataclass

import redis

from shared.store.callback_state import DeliveryState
from shared.store.keys import Keys

_NOW = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
"""

# KEYS: due set. ARGV: most entries, job key prefix. Entries due now, each with its job's callback URL and
# owner, oldest first; an entry whose job is gone (expired) or no longer pending is dropped.
_PEEK = (
    _NOW
    + """
local found = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))) do
  local job = redis.call('HMGET', ARGV[2] .. id, 'callback_state', 'callback_url', 'owner')
  if job[1] ~= 'pending' then
    redis.call('ZREM', KEYS[1], id)
  else
    table.insert(found, id)
    table.insert(found, job[2] or '')
    table.insert(found, job[3] or '')
  end
end
return found
"""
)

# KEYS: due set. ARGV: lease ms, job key prefix, ids. Each id still due now (no other deliverer took it
# meanwhile) and pending is leased, with its new attempt number.
_TAKE = (
    _NOW
    + """
local taken = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local due = redis.call('ZSCORE', KEYS[1], id)
  if due and tonumber(due) <= now and redis.call('HGET', ARGV[2] .. id, 'callback_state') == 'pending' then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), id)
    table.insert(taken, id)
    table.insert(taken, redis.call('HINCRBY', ARGV[2] .. id, 'callback_attempts', 1))
  end
end
return taken
"""
)

# KEYS: due set. ARGV: delay ms, ids. Each id still due now is due again after the delay (no attempt
# counted). Returns that time, then the ids deferred.
_DEFER = (
    _NOW
    + """
local deferred = {now + tonumber(ARGV[1])}
for i = 2, #ARGV do
  local due = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if due and tonumber(due) <= now then
    redis.call('ZADD', KEYS[1], deferred[1], ARGV[i])
    table.insert(deferred, ARGV[i])
  end
end
return deferred
"""
)

# KEYS: due set. ARGV: id, time pairs. Each id still due at the time its deferral gave it (nobody took or
# settled it since) is due now. Returns how many.
_WAKE = (
    _NOW
    + """
local woken = 0
for i = 1, #ARGV, 2 do
  if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[i]) or -1) == tonumber(ARGV[i + 1]) then
    redis.call('ZADD', KEYS[1], now, ARGV[i])
    woken = woken + 1
  end
end
return woken
"""
)

# KEYS: job, due set. ARGV: id, attempt, outcome (delivered, failed, or retry), retry delay ms, deadline s,
# last status ('' none), last error. A retry due after the deadline (`callback_since` + deadline) fails
# instead. Returns the state written, or '' when the attempt is no longer the job's latest (fenced).
_SETTLE = """
if redis.call('HGET', KEYS[1], 'callback_attempts') ~= ARGV[2] then return '' end
if redis.call('HGET', KEYS[1], 'callback_state') ~= 'pending' then return '' end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local state = ARGV[3]
local due = now + tonumber(ARGV[4])
if state == 'retry' then
  local since = tonumber(redis.call('HGET', KEYS[1], 'callback_since') or t[1])
  state = (due > (since + tonumber(ARGV[5])) * 1000) and 'failed' or 'pending'
end
redis.call('HSET', KEYS[1], 'callback_state', state, 'callback_last_status', ARGV[6], 'callback_last_error', ARGV[7])
if state == 'pending' then redis.call('ZADD', KEYS[2], due, ARGV[1]) else redis.call('ZREM', KEYS[2], ARGV[1]) end
return state
"""


@dataclass(frozen=True)
class Due:
    """An entry due now: its job, the job's callback URL and owner (an API key's id, '' without keys)."""

    job_id: str
    url: str
    owner: str


@dataclass(frozen=True)
class Attempt:
    """One taken entry: the job and its attempt number (the token its settlement carries)."""

    job_id: str
    number: int


class Outbox:
    def __init__(self, client: redis.Redis, keys: Keys):
        self.client = client
        self.keys = keys
        self._peek = client.register_script(_PEEK)
        self._take = client.register_script(_TAKE)
        self._defer = client.register_script(_DEFER)
        self._wake = client.register_script(_WAKE)
        self._settle = client.register_script(_SETTLE)

    def peek(self, limit: int) -> list[Due]:
        """Up to `limit` entries due now, oldest first, none taken."""
        found = self._peek(keys=[self.keys.callbacks_due], args=[limit, self.keys.job("")])
        return [Due(*found[i : i + 3]) for i in range(0, len(found), 3)]

    def take_these(self, job_ids: list[str], lease_seconds: float) -> list[Attempt]:
        """Those of `job_ids` still due now, each leased for `lease_seconds`."""
        if not job_ids:
            return []
        args = [int(lease_seconds * 1000), self.keys.job(""), *job_ids]
        found = self._take(keys=[self.keys.callbacks_due], args=args)
        return [Attempt(job_id, int(number)) for job_id, number in zip(found[0::2], found[1::2])]

    def take(self, limit: int, lease_seconds: float) -> list[Attempt]:
        """Up to `limit` due entries, oldest first, each leased for `lease_seconds`."""
        return self.take_these([due.job_id for due in self.peek(limit)], lease_seconds)

    def defer(self, job_ids: list[str], delay_seconds: float) -> tuple[int, list[str]]:
        """Those of `job_ids` still due now, due again after `delay_seconds` (nothing counted): the time they
        are due then (Redis's, in ms) and the ids deferred."""
        if not job_ids:
            return 0, []
        until, *deferred = self._defer(keys=[self.keys.callbacks_due], args=[int(delay_seconds * 1000), *job_ids])
        return int(until), list(deferred)

    def wake(self, deferred: list[tuple[str, int]]) -> int:
        """Each (job id, time it was deferred to) due now, if it still waits for that time."""
        if not deferred:
            return 0
        return int(self._wake(keys=[self.keys.callbacks_due], args=[x for pair in deferred for x in pair]))

    def delivered(self, attempt: Attempt, status: int) -> str:
        return self._write(attempt, DeliveryState.DELIVERED, 0, 0, str(status), "")

    def failed(self, attempt: Attempt, error: str, status: int | None = None) -> str:
        """Give up now (the policy refuses the URL)."""
        return self._write(attempt, DeliveryState.FAILED, 0, 0, str(status or ""), error)

    def retry(self, attempt: Attempt, delay_seconds: float, deadline: int, error: str, status: int | None) -> str:
        """Due again after `delay_seconds`, unless that is past the deadline: then failed."""
        return self._write(attempt, "retry", int(delay_seconds * 1000), deadline, str(status or ""), error)

    def _write(self, attempt: Attempt, outcome: str, delay_ms: int, deadline: int, status: str, error: str) -> str:
        keys = [self.keys.job(attempt.job_id), self.keys.callbacks_due]
        args = [attempt.job_id, attempt.number, outcome, delay_ms, deadline, status, error[:500]]
        return str(self._settle(keys=keys, args=args))

    def due_count(self) -> int:
        return int(self.client.zcard(self.keys.callbacks_due))

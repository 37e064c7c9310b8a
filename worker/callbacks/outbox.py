"""The callback outbox in Redis: the due set (shared.store.keys Keys.callbacks_due) that the scripts making a job
final fill (shared.store.job_scripts _OUTBOX), taken with a lease and settled on the job's record.

Taking an entry counts an attempt (`callback_attempts`, its token) and moves the entry to its lease's end:
no other deliverer takes it meanwhile, and a deliverer killed mid-attempt has its entry taken again once
the lease ends (at least once). Settling is fenced by the token: a deliverer that overran its lease writes
nothing once another took the entry. Every time is Redis's (no clock skew between deliverers)."""

from __future__ import annotations

from dataclasses import dataclass

import redis

from shared.store.callback_state import DeliveryState
from shared.store.keys import Keys

# KEYS: due set. ARGV: lease ms, most entries, job key prefix. Entries due now, each with its new attempt
# number; an entry whose job is gone (expired) or no longer pending is dropped.
_TAKE = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local taken = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))) do
  local job = ARGV[3] .. id
  if redis.call('HGET', job, 'callback_state') ~= 'pending' then
    redis.call('ZREM', KEYS[1], id)
  else
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), id)
    table.insert(taken, id)
    table.insert(taken, redis.call('HINCRBY', job, 'callback_attempts', 1))
  end
end
return taken
"""

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
class Attempt:
    """One taken entry: the job and its attempt number (the token its settlement carries)."""

    job_id: str
    number: int


class Outbox:
    def __init__(self, client: redis.Redis, keys: Keys):
        self.client = client
        self.keys = keys
        self._take = client.register_script(_TAKE)
        self._settle = client.register_script(_SETTLE)

    def take(self, limit: int, lease_seconds: float) -> list[Attempt]:
        """Up to `limit` due entries, each leased for `lease_seconds`."""
        found = self._take(keys=[self.keys.callbacks_due], args=[int(lease_seconds * 1000), limit, self.keys.job("")])
        return [Attempt(job_id, int(number)) for job_id, number in zip(found[0::2], found[1::2])]

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

"""Characters per API key per day and per month (UTC), counted atomically at submission.

Every character a job asks for counts, whether a worker translates it or the sentence cache answers it:
the service served it either way. The share the cache answered at submission is counted apart, so a
client sees what its repeats saved. A submission is charged before its job is written (one Lua call checks
both limits and counts, so two requests at once cannot both slip under a limit) and refunded when the job
is not written after all (a queue at its cap, a storage quota, an Idempotency-Key that a request sent at the
same moment took, the queue unavailable; a retry whose key names a job is answered before any charge).
A document's job is charged the characters of its text, which only the document stage knows: the upload is
charged what the API can count (a text document's file, a .docx nothing) and the stage settles the job to
the characters it parsed, once (`settle`: one Lua call, which refunds the upload and charges nothing when
the rest is over a limit, and the job then fails `quota_exceeded`).

Redis: one hash a client and period (`chars`, `cached`, `jobs`), kept for two periods so that the last one
can be read back, and the all-time totals by client (what /metrics shows, by the client's key digest).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import redis

from shared.settings import Settings
from shared.store.keys import Keys

_DAY_TTL = 3 * 86_400  # today's and yesterday's counts stay readable
_MONTH_TTL = 63 * 86_400

# KEYS: the client's day hash, its month hash, the totals hash. ARGV: characters, cached characters, day
# limit, month limit (0: none), day ttl, month ttl, the client, jobs (1 for a charge, -1 for a refund).
# A charge over a limit writes nothing and answers which limit and what is used; a refund is never refused.
CHARGE = """
local chars = tonumber(ARGV[1])
if chars > 0 then
  local day = tonumber(redis.call('HGET', KEYS[1], 'chars') or '0')
  local month = tonumber(redis.call('HGET', KEYS[2], 'chars') or '0')
  if tonumber(ARGV[3]) > 0 and day + chars > tonumber(ARGV[3]) then return {'day', day} end
  if tonumber(ARGV[4]) > 0 and month + chars > tonumber(ARGV[4]) then return {'month', month} end
end
for i, ttl in ipairs({ARGV[5], ARGV[6]}) do
  redis.call('HINCRBY', KEYS[i], 'chars', chars)
  redis.call('HINCRBY', KEYS[i], 'cached', ARGV[2])
  redis.call('HINCRBY', KEYS[i], 'jobs', ARGV[8])
  redis.call('EXPIRE', KEYS[i], ttl)
end
redis.call('HINCRBY', KEYS[3], ARGV[7] .. ':chars', chars)
redis.call('HINCRBY', KEYS[3], ARGV[7] .. ':cached', ARGV[2])
return {'ok', 0}
"""


# KEYS: the day and month hashes and the totals hash CHARGE counted the job's upload in, the job. ARGV:
# characters parsed, cached characters, day limit, month limit (0: none), day ttl, month ttl, the client,
# what the upload was charged. Counts the difference, unless it takes the client over a limit: then the
# upload's charge is taken back (the job fails). Once per job (its `quota` field says how it was settled:
# a retried parse gets the same answer); a job that is gone is not settled. A counted job's `charged` field
# is the characters it was charged (DeepL's `billed_characters`: api.compat.deepl.documents).
SETTLE = """
if redis.call('EXISTS', KEYS[4]) == 0 then return {'ok', 0} end
local settled = redis.call('HGET', KEYS[4], 'quota')
if settled then
  local outcome, used = string.match(settled, '^(%a+):(%d+)$')
  return {outcome, tonumber(used)}
end
local deposit = tonumber(ARGV[8])
local more = tonumber(ARGV[1]) - deposit
local outcome, used = 'ok', 0
if more > 0 then
  local day = tonumber(redis.call('HGET', KEYS[1], 'chars') or '0')
  local month = tonumber(redis.call('HGET', KEYS[2], 'chars') or '0')
  if tonumber(ARGV[3]) > 0 and day + more > tonumber(ARGV[3]) then
    outcome, used = 'day', day - deposit
  elseif tonumber(ARGV[4]) > 0 and month + more > tonumber(ARGV[4]) then
    outcome, used = 'month', month - deposit
  end
end
local chars, cached, jobs = more, tonumber(ARGV[2]), 0
if outcome ~= 'ok' then chars, cached, jobs = 0 - deposit, 0, -1 end  -- (not -deposit: Lua writes -0 as '-0')
for i, ttl in ipairs({ARGV[5], ARGV[6]}) do
  redis.call('HINCRBY', KEYS[i], 'chars', chars)
  redis.call('HINCRBY', KEYS[i], 'cached', cached)
  redis.call('HINCRBY', KEYS[i], 'jobs', jobs)
  redis.call('EXPIRE', KEYS[i], ttl)
end
redis.call('HINCRBY', KEYS[3], ARGV[7] .. ':chars', chars)
redis.call('HINCRBY', KEYS[3], ARGV[7] .. ':cached', cached)
used = math.max(0, used)
redis.call('HSET', KEYS[4], 'quota', outcome .. ':' .. used)
if outcome == 'ok' then redis.call('HSET', KEYS[4], 'charged', ARGV[1]) end
return {outcome, used}
"""
_ADJECTIVE = {"day": "daily", "month": "monthly"}


@dataclass(frozen=True)
class Limits:
    per_day: int = 0  # characters; 0: no limit
    per_month: int = 0


@dataclass(frozen=True)
class Refused:
    """A charge over a limit: which period, its limit, what is used of it, and when it starts again."""

    period: str  # "day" or "month"
    limit: int
    used: int
    resets_at: datetime

    @property
    def retry_after(self) -> int:
        return max(1, int((self.resets_at - datetime.now(timezone.utc)).total_seconds()) + 1)

    def message(self, asked: str) -> str:
        """Why `asked` ("this request's 20 characters") is refused: the limit, what is used, when it resets."""
        return (
            f"{asked} would take this client over its {_ADJECTIVE[self.period]} limit of {self.limit} "
            f"({self.used} used); it resets at {self.resets_at.astimezone(timezone.utc):%Y-%m-%dT%H:%M:%SZ}"
        )


@dataclass(frozen=True)
class PeriodUsage:
    period: str  # "day" or "month"
    start: datetime
    resets_at: datetime
    characters: int
    cached_characters: int
    jobs: int
    limit: int


def period_bounds(period: str, now: datetime) -> tuple[datetime, datetime]:
    """The UTC day or month holding `now`: its start and the next one's."""
    if period == "day":
        start = now.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        return start, start + timedelta(days=1)
    start = now.astimezone(timezone.utc).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return start, (start + timedelta(days=32)).replace(day=1)


def parse_overrides(spec: str) -> dict[str, Limits]:
    """`TRANSQ_QUOTA_OVERRIDES`: `<client>=<per day>/<per month>` items, comma-separated; the client is a
    key's digest as GET /v1/usage shows it (`key:` and 32 hex digits), 0 meaning no limit."""
    overrides = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        client, _, limits = item.partition("=")
        day, _, month = limits.partition("/")
        if not client.strip() or not day.strip().isdigit() or not month.strip().isdigit():
            raise ValueError(f"TRANSQ_QUOTA_OVERRIDES: {item!r} is not <client>=<per day>/<per month>")
        overrides[client.strip()] = Limits(int(day), int(month))
    return overrides


class CharacterQuota:
    """Counts and limits the characters each client (an API key's digest, else an address) submits."""

    def __init__(self, client: redis.Redis, keys: Keys, settings: Settings):
        self.client = client
        self.keys = keys
        self.default = Limits(settings.quota_chars_per_day, settings.quota_chars_per_month)
        self.overrides = parse_overrides(settings.quota_overrides)
        self._charge = client.register_script(CHARGE)
        self._settle = client.register_script(SETTLE)

    def limits(self, who: str) -> Limits:
        return self.overrides.get(who, self.default)

    def charge(self, who: str, characters: int, cached: int, now: datetime | None = None) -> Refused | None:
        """Count a submission of `characters` (`cached` of them answered by the cache); None when counted,
        else what refused it (nothing is counted then)."""
        now = now or datetime.now(timezone.utc)
        limits = self.limits(who)
        outcome, used = self._run(who, characters, cached, 1, limits, now)
        if outcome == "ok":
            return None
        limit = limits.per_day if outcome == "day" else limits.per_month
        return Refused(outcome, limit, int(used), period_bounds(outcome, now)[1])

    def settle(
        self, who: str, job_key: str, characters: int, cached: int, deposit: int, at: datetime
    ) -> Refused | None:
        """Settle a document job (its record at `job_key`) to the `characters` its text has once parsed
        (`cached` of them answered by the cache), its upload having been charged `deposit` at `at`: None when
        counted, else what refused it (its upload refunded then); the same answer again for the same job."""
        limits = self.limits(who)
        args = [characters, cached, limits.per_day, limits.per_month, _DAY_TTL, _MONTH_TTL, who, deposit]
        outcome, used = self._settle(keys=[*self._keys(who, at), job_key], args=args)
        if outcome == "ok":
            return None
        limit = limits.per_day if outcome == "day" else limits.per_month
        return Refused(outcome, limit, int(used), period_bounds(outcome, at)[1])

    def settled(self, job_key: str) -> int | None:
        """The characters a document job (its record at `job_key`) was charged once parsed; None before."""
        found = self.client.hget(job_key, "charged")
        return int(found) if found is not None else None

    def refund(self, who: str, characters: int, cached: int, now: datetime | None = None) -> None:
        """Take back a charge whose job was not written."""
        self._run(who, -characters, -cached, -1, Limits(), now or datetime.now(timezone.utc))

    def usage(self, who: str, now: datetime | None = None) -> dict[str, list[PeriodUsage]]:
        """This day and month and the last ones: {"day": [this, last], "month": [this, last]}."""
        now = now or datetime.now(timezone.utc)
        limits = self.limits(who)
        found: dict[str, list[PeriodUsage]] = {}
        for period, limit in (("day", limits.per_day), ("month", limits.per_month)):
            start, end = period_bounds(period, now)
            last_start, _ = period_bounds(period, start - timedelta(seconds=1))
            found[period] = [
                self._read(who, period, start, end, limit),
                self._read(who, period, last_start, start, limit),
            ]
        return found

    def totals(self) -> dict[str, tuple[int, int]]:
        """All-time characters and cached characters by client."""
        raw = self.client.hgetall(self.keys.quota_totals)
        clients = {name.rsplit(":", 1)[0] for name in raw}
        return {c: (int(raw.get(f"{c}:chars", 0)), int(raw.get(f"{c}:cached", 0))) for c in sorted(clients)}

    def _run(self, who: str, characters: int, cached: int, jobs: int, limits: Limits, now: datetime) -> list:
        args = [characters, cached, limits.per_day, limits.per_month, _DAY_TTL, _MONTH_TTL, who, jobs]
        return self._charge(keys=self._keys(who, now), args=args)

    def _keys(self, who: str, now: datetime) -> list[str]:
        """The client's day and month hashes at `now`, and the totals."""
        return [
            self.keys.quota(who, "day", _label("day", now)),
            self.keys.quota(who, "month", _label("month", now)),
            self.keys.quota_totals,
        ]

    def _read(self, who: str, period: str, start: datetime, end: datetime, limit: int) -> PeriodUsage:
        data = self.client.hgetall(self.keys.quota(who, period, _label(period, start)))
        return PeriodUsage(
            period,
            start,
            end,
            int(data.get("chars", 0)),
            int(data.get("cached", 0)),
            int(data.get("jobs", 0)),
            limit,
        )


def _label(period: str, when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y%m%d" if period == "day" else "%Y%m")

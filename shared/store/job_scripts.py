"""The Lua scripts that create a job and move it forward: each status change is one atomic call in Redis, so
status only moves forward and nothing is half-written (a script refused at maxmemory writes nothing: its
first write is the one refused). shared.store.jobs.JobStore runs CREATE, TRANSITION and FORGET,
shared.store.document_store.DocumentStore PARSED and RENDERED; the worker's claims run
shared.store.claim_scripts, which share FENCE and OUTBOX. Every value is an argument of its own (KEYS and ARGV
each hold one), never several packed into one string."""

from shared.store.job_events import EMIT
from shared.store.job_status import lua_rank_table

# Shared by the scripts: rank of each status (shared.store.job_status); a transition must raise the rank.
_RANKS = lua_rank_table()

# Fencing: each claim of a job raises the `fence` field of its record (1, 2, ...) and hands the new value to
# the claimant; a worker's later writes for the job carry it, and a script refuses them once the job has been
# claimed again (its worker was cut off or stalled past its lease and another took the job over). '' = none
# (the API's cancel). Used as `if fenced(KEYS[1], token) then return ... end`.
FENCE = "local function fenced(job, token) return token ~= '' and redis.call('HGET', job, 'fence') ~= token end\n"

# The callback outbox (worker.callbacks): a job that carries a `callback_url` enters the due set (shared.store.keys
# Keys.callbacks_due) in the same script that makes it final, so no callback can be lost between the two.
# Used as `callback_due(job key, id, due set)` right after a job becomes final.
OUTBOX = """
local function callback_due(job, id, due)
  if redis.call('HEXISTS', job, 'callback_url') == 0 then return end
  if redis.call('HEXISTS', job, 'callback_state') == 1 then return end
  local t = redis.call('TIME')
  redis.call('HSET', job, 'callback_state', 'pending', 'callback_since', t[1])
  redis.call('ZADD', due, t[1] * 1000 + math.floor(t[2] / 1000), id)
end
"""

# What each client holds in the broker (shared.store.keys.Keys.usage): a sorted set of `<job>:<kind>:<bytes>`
# (kind r: a job record, its glossary and scores included; s: a document's source; o: a translated document;
# g: a stored glossary, shared.store.glossary_store) scored by when that data expires, and its total in
# `<set>:bytes`. Entries whose time has come are released on the client's next submission; a job's entry
# changes with its record (its texts go when it finishes) and goes with its data. A counter is decremented
# before its entries go: at maxmemory that write (the first) is refused, not half.
USAGE = """
local function usage_release(z, now)
  local gone = redis.call('ZRANGEBYSCORE', z, '-inf', now)
  if #gone == 0 then return end
  local freed = 0
  for _, m in ipairs(gone) do freed = freed + tonumber(string.match(m, ':(%d+)$')) end
  redis.call('DECRBY', z .. ':bytes', freed)
  redis.call('ZREMRANGEBYSCORE', z, '-inf', now)
end
local function usage_add(job, field, z, member, expiry)
  redis.call('ZADD', z, expiry, member)
  redis.call('INCRBY', z .. ':bytes', tonumber(string.match(member, ':(%d+)$')))
  local last = math.ceil(tonumber(redis.call('ZRANGE', z, -1, -1, 'WITHSCORES')[2])) + 1
  redis.call('EXPIREAT', z, last)
  redis.call('EXPIREAT', z .. ':bytes', last)
  redis.call('HSET', job, field, member)
end
local function usage_drop(job, field, z)
  local member = redis.call('HGET', job, field)
  if member and redis.call('ZSCORE', z, member) then
    redis.call('DECRBY', z .. ':bytes', tonumber(string.match(member, ':(%d+)$')))
    redis.call('ZREM', z, member)
  end
  redis.call('HDEL', job, field)
end
local function record_bytes(job)
  local size = 256
  for _, f in ipairs({'texts', 'spans', 'result', 'warnings', 'error', 'document', 'filename', 'glossary', 'scores'}) do
    size = size + redis.call('HSTRLEN', job, f)
  end
  return size
end
local function usage_record(job, id, expiry)
  local z = redis.call('HGET', job, 'usage')
  if not z then return end
  usage_drop(job, 'usage_r', z)
  usage_add(job, 'usage_r', z, id .. ':r:' .. record_bytes(job), expiry)
end
local function now_seconds() return tonumber(redis.call('TIME')[1]) end
"""

# KEYS: job, its route's pending set, idempotency key, document source, the callback due set (OUTBOX), its
# partial translations, its events (EMIT), its tombstone (FORGET's: a job taken back is never written after).
# ARGV: ttl, pending score ('' when not queued), id, queue cap (0: none), idempotency ttl ('' when none), the
# request's digest, job key prefix, usage set ('' when not accounted), its limit in bytes (0: none), the
# source's ttl, the compressed document source ('' when none), p, m, then p partial field/values (the sentences
# the cache answered at submission, as a worker records them), m `sentence` events (theirs), then the record's
# field/value pairs. Over the
# client's storage limit (unless it holds nothing) nothing is written: {'over_quota', <bytes held>, <seconds
# until its first entry expires>}; an idempotency key naming a job: {'exists', <its id>, <its request's
# digest>} (the key's value is "<id> <digest>"); a job taken back: {'taken_back'}. One command (nothing to decode): cheap to send and to run,
# and atomic (nothing is half-written, even on OOM): the idempotency key, the queue cap and the insert are one
# step, so concurrent submissions can neither both create nor both pass the cap.
CREATE = (
    _RANKS
    + EMIT
    + OUTBOX
    + USAGE
    + """
if redis.call('EXISTS', KEYS[8]) == 1 then return {'taken_back'} end
if ARGV[5] ~= '' then
  local existing = redis.call('GET', KEYS[3])
  if existing then
    local id, digest = string.match(existing, '^(%S+) (%S+)$')
    if redis.call('EXISTS', ARGV[7] .. id) == 1 then return {'exists', id, digest} end
  end
end
if ARGV[2] ~= '' and tonumber(ARGV[4]) > 0 and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return {'overloaded'}
end
local now = now_seconds()
local p, m = tonumber(ARGV[12]), tonumber(ARGV[13])
local record_at = 14 + p + m
local z = ARGV[8] ~= '' and ARGV[8] or nil
if z then
  usage_release(z, now)
  local held = tonumber(redis.call('GET', z .. ':bytes') or '0')
  local wanted = 256 + #ARGV[11]
  for i = record_at, #ARGV do wanted = wanted + #ARGV[i] end
  if tonumber(ARGV[9]) > 0 and held > 0 and held + wanted > tonumber(ARGV[9]) then
    local first = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
    return {'over_quota', held, math.max(1, math.ceil(tonumber(first[2] or now) - now))}
  end
end
redis.call('HSET', KEYS[1], unpack(ARGV, record_at))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]))
if p > 0 then
  redis.call('HSET', KEYS[6], unpack(ARGV, 14, 13 + p))
  redis.call('EXPIRE', KEYS[6], tonumber(ARGV[1]))
end
for i = 14 + p, 13 + p + m do emit(KEYS[1], KEYS[7], 'sentence', ARGV[i]) end
emit_progress(KEYS[1], KEYS[7])
if rank[redis.call('HGET', KEYS[1], 'status')] == 4 then callback_due(KEYS[1], ARGV[3], KEYS[5]) end
if ARGV[2] ~= '' then redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3]) end
if ARGV[5] ~= '' then redis.call('SET', KEYS[3], ARGV[3] .. ' ' .. ARGV[6], 'EX', tonumber(ARGV[5])) end
if z then
  redis.call('HSET', KEYS[1], 'usage', z)
  usage_record(KEYS[1], ARGV[3], now + tonumber(ARGV[1]))
end
if ARGV[11] ~= '' then
  redis.call('SET', KEYS[4], ARGV[11], 'EX', tonumber(ARGV[10]))
  if z then usage_add(KEYS[1], 'usage_s', z, ARGV[3] .. ':s:' .. #ARGV[11], now + tonumber(ARGV[10])) end
end
return {'created'}
"""
)

# KEYS: job, lease, partial translations, document source, the callback due set (OUTBOX), statistics, its
# events (EMIT). ARGV: id, new status, now, ttl, pending-set key prefix (the job's route completes it), fence
# ('' for none), m, then m `sentence` events (the sentences recorded with it: the last of a translation), then
# field/value pairs. A job whose translation is done (rendering or final) lets its lease,
# partial translations and texts go; a final one its document source too. A job failed here counts in
# `jobs_failed`, as one CLAIM fails does.
TRANSITION = (
    _RANKS
    + EMIT
    + FENCE
    + OUTBOX
    + USAGE
    + """
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return {'missing', ''} end
if fenced(KEYS[1], ARGV[6]) then return {'fenced', current} end
if rank[ARGV[2]] <= rank[current] then return {'refused', current} end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
local m = tonumber(ARGV[7])
for i = 8 + m, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if rank[ARGV[2]] >= 3 then
  redis.call('HDEL', KEYS[1], 'parked', 'texts', 'spans', 'glossary')
  redis.call('ZREM', ARGV[5] .. (redis.call('HGET', KEYS[1], 'route') or ''), ARGV[1])
  redis.call('DEL', KEYS[2], KEYS[3])
end
local z = redis.call('HGET', KEYS[1], 'usage')
if rank[ARGV[2]] == 4 then
  redis.call('HSET', KEYS[1], 'finished_at', ARGV[3])
  redis.call('DEL', KEYS[4])
  callback_due(KEYS[1], ARGV[1], KEYS[5])
  if z then usage_drop(KEYS[1], 'usage_s', z) end
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
usage_record(KEYS[1], ARGV[1], now_seconds() + tonumber(ARGV[4]))
if ARGV[2] == 'failed' then redis.call('HINCRBY', KEYS[6], 'jobs_failed', 1) end
for i = 8, 7 + m do emit(KEYS[1], KEYS[7], 'sentence', ARGV[i]) end
emit_progress(KEYS[1], KEYS[7])
return {'ok', ARGV[2]}
"""
)

# KEYS: job, its route's pending set, its events (EMIT), its partial translations. ARGV: id, ttl, the stage's
# fence ('' none: FENCE), p, m, p partial field/values and m `sentence` events (the sentences the cache
# answered, recorded as CREATE records them), then the parse's field/value pairs (the document's units as the job's texts, its sentences, the layout, and the route, model
# and detection the stage chose: shared.store.document_store.PARSED_FIELDS). A parsed document job joins its
# route's queue; 0 when it is no longer parsing (cancelled, failed by a time limit) or another stage took it.
PARSED = (
    EMIT
    + FENCE
    + USAGE
    + """
if fenced(KEYS[1], ARGV[3]) then return 0 end
if redis.call('HGET', KEYS[1], 'status') ~= 'parsing' then return 0 end
local p, m = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('HSET', KEYS[1], 'status', 'queued', unpack(ARGV, 6 + p + m))
redis.call('ZADD', KEYS[2], redis.call('HGET', KEYS[1], 'submitted'), ARGV[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
usage_record(KEYS[1], ARGV[1], now_seconds() + tonumber(ARGV[2]))
if p > 0 then
  redis.call('HSET', KEYS[4], unpack(ARGV, 6, 5 + p))
  redis.call('EXPIRE', KEYS[4], tonumber(ARGV[2]))
end
for i = 6 + p, 5 + p + m do emit(KEYS[1], KEYS[3], 'sentence', ARGV[i]) end
emit_progress(KEYS[1], KEYS[3])
return 1
"""
)

# KEYS: job, translated documents, document source. ARGV: id, now, the translated documents (compressed),
# their ttl, the finished record's ttl, the stage's fence ('' none: FENCE), m, m `sentence` events (every
# sentence cached: the document is rendered at once), then field/value pairs. A parsed
# (every sentence cached) or translated document job succeeds: its translated documents are stored, its
# source, texts and per-unit translations go; 0 when it is neither parsing nor rendering, or another stage
# took it. KEYS[4]: the callback due set (OUTBOX); KEYS[5]: its events (EMIT: `document`, then its progress).
RENDERED = (
    EMIT
    + FENCE
    + OUTBOX
    + USAGE
    + """
if fenced(KEYS[1], ARGV[6]) then return 0 end
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'parsing' and status ~= 'rendering' then return 0 end
local now = now_seconds()
redis.call('SET', KEYS[2], ARGV[3], 'EX', tonumber(ARGV[4]))
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[1], 'status', 'succeeded', 'finished_at', ARGV[2])
if not redis.call('HGET', KEYS[1], 'started_at') then redis.call('HSET', KEYS[1], 'started_at', ARGV[2]) end
local m = tonumber(ARGV[7])
for i = 8 + m, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('HDEL', KEYS[1], 'texts', 'spans', 'result', 'parked')
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
callback_due(KEYS[1], ARGV[1], KEYS[4])
local z = redis.call('HGET', KEYS[1], 'usage')
if z then
  usage_drop(KEYS[1], 'usage_s', z)
  usage_add(KEYS[1], 'usage_o', z, ARGV[1] .. ':o:' .. #ARGV[3], now + tonumber(ARGV[4]))
  usage_record(KEYS[1], ARGV[1], now + tonumber(ARGV[5]))
end
for i = 8, 7 + m do emit(KEYS[1], KEYS[5], 'sentence', ARGV[i]) end
emit(KEYS[1], KEYS[5], 'document', '{}')
emit_progress(KEYS[1], KEYS[5])
return 1
"""
)

# KEYS: job, its route's pending set, idempotency key ('' none), document source, its events, its tombstone. ARGV:
# id, the tombstone's ttl. Removes a job whose message could not be sent, and what it holds of its client's
# storage; the tombstone refuses a create of it that runs later (sent before, to a primary that froze).
FORGET = (
    USAGE
    + """
local z = redis.call('HGET', KEYS[1], 'usage')
if z then
  usage_drop(KEYS[1], 'usage_r', z)
  usage_drop(KEYS[1], 'usage_s', z)
end
redis.call('DEL', KEYS[1], KEYS[4], KEYS[5])
-- a tombstone: a create of this job still on its way (queued in a primary that froze) writes nothing after this
redis.call('SET', KEYS[6], '1', 'EX', tonumber(ARGV[2]))
-- the idempotency key only while it names this job (a failed create may have found it naming an earlier one)
if KEYS[3] ~= '' and string.sub(redis.call('GET', KEYS[3]) or '', 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
  redis.call('DEL', KEYS[3])
end
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""
)

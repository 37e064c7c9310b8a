"""The Lua scripts of the translation memory store (shared.store.memory_store), each one atomic step: a memory
created within its owner's cap and storage, read (and renewed), deleted, or given entries (corrections), its
owner's storage account (shared.store.job_scripts, USAGE: entries `<id>:m:<bytes>`) kept in step."""

from __future__ import annotations

from shared.store.job_scripts import USAGE

# hold(meta, id, usage set ('': not accounted), expiry): the memory's four keys live until `expiry` and its
# owner's account holds its bytes until then (its entry is replaced: the memory's size changes with corrections).
_HOLD = """
local function hold(meta, id, z, expiry)
  for _, part in ipairs({'', ':x', ':e', ':g'}) do redis.call('EXPIREAT', meta .. part, expiry) end
  if z == '' then return end
  local old = redis.call('HGET', meta, 'member')
  if old and redis.call('ZSCORE', z, old) then
    redis.call('DECRBY', z .. ':bytes', tonumber(string.match(old, ':(%d+)$')))
    redis.call('ZREM', z, old)
  end
  local member = id .. ':m:' .. redis.call('HGET', meta, 'bytes')
  redis.call('INCRBY', z .. ':bytes', tonumber(redis.call('HGET', meta, 'bytes')))
  redis.call('ZADD', z, expiry, member)
  redis.call('HSET', meta, 'member', member)
  local last = math.ceil(tonumber(redis.call('ZRANGE', z, -1, -1, 'WITHSCORES')[2])) + 1
  redis.call('EXPIREAT', z, last)
  redis.call('EXPIREAT', z .. ':bytes', last)
end
local function account(limit, z) return tonumber(limit) > 0 and z or '' end
local function over_quota(z, limit, more, now)
  if z == '' then return false end
  usage_release(z, now)
  local held = tonumber(redis.call('GET', z .. ':bytes') or '0')
  if held > 0 and held + more > tonumber(limit) then
    local first = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
    return {'over_quota', held, math.max(1, math.ceil(tonumber(first[2] or now) - now))}
  end
  return false
end
"""

# KEYS: the owner's index, the memory's hash, the owner's usage set. ARGV: the cap, the id, the ttl, the storage
# limit (0: not accounted), its bytes, then its hash's field/value pairs. {'created'}; {'full'} at the cap (ids
# whose memory expired leave the index first); {'over_quota', held, seconds until the first of it expires}.
CREATE = (
    USAGE
    + _HOLD
    + """
local now = now_seconds()
local prefix = string.sub(KEYS[2], 1, #KEYS[2] - #ARGV[2])
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if redis.call('EXISTS', prefix .. id) == 0 then redis.call('ZREM', KEYS[1], id) end
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return {'full'} end
local z = account(ARGV[4], KEYS[3])
local refused = over_quota(z, ARGV[4], tonumber(ARGV[5]), now)
if refused then return refused end
redis.call('HSET', KEYS[2], 'bytes', ARGV[5], unpack(ARGV, 6))
hold(KEYS[2], ARGV[2], z, now + tonumber(ARGV[3]))
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], t[1] + t[2] / 1000000, ARGV[2])  -- oldest first, to the microsecond
redis.call('EXPIREAT', KEYS[1], now + tonumber(ARGV[3]))
return {'created'}
"""
)

# KEYS: the memory's hash, the owner's index, the owner's usage set. ARGV: the id, the ttl, the storage limit.
# The memory's hash (empty when there is none), renewed.
READ = (
    USAGE
    + _HOLD
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local expiry = now_seconds() + tonumber(ARGV[2])
hold(KEYS[1], ARGV[1], account(ARGV[3], KEYS[3]), expiry)
redis.call('EXPIREAT', KEYS[2], expiry)
return redis.call('HGETALL', KEYS[1])
"""
)

# KEYS: the memory's hash, the owner's index, the owner's usage set. ARGV: the id. 1 when it was there.
DELETE = """
local member = redis.call('HGET', KEYS[1], 'member')
if member and redis.call('ZSCORE', KEYS[3], member) then
  redis.call('DECRBY', KEYS[3] .. ':bytes', tonumber(string.match(member, ':(%d+)$')))
  redis.call('ZREM', KEYS[3], member)
end
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('UNLINK', KEYS[1], KEYS[1] .. ':x', KEYS[1] .. ':e', KEYS[1] .. ':g') > 0 and 1 or 0
"""

# KEYS: the memory's hash, the owner's index, the owner's usage set. ARGV: the id, the ttl, the storage limit, the
# most entries, the time (ISO), then per entry: its digest, [source, target] as JSON, its bigrams (space
# separated), its bytes. An entry whose source is there already gets the new target; a new one is numbered and
# indexed. {'added', new, updated}; {'missing'}; {'full', entries}; {'over_quota', ...}.
ADD = (
    USAGE
    + _HOLD
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local m = KEYS[1]
local new, more = 0, 0
for i = 6, #ARGV, 4 do
  if redis.call('HEXISTS', m .. ':x', ARGV[i]) == 0 then new = new + 1 end
  more = more + tonumber(ARGV[i + 3])
end
local entries = tonumber(redis.call('HGET', m, 'entries'))
if entries + new > tonumber(ARGV[4]) then return {'full', entries} end
local now = now_seconds()
local z = account(ARGV[3], KEYS[3])
local refused = over_quota(z, ARGV[3], more, now)
if refused then return refused end
local updated = 0
for i = 6, #ARGV, 4 do
  local n = redis.call('HGET', m .. ':x', ARGV[i])
  if n then
    updated = updated + 1
  else
    n = tostring(redis.call('HINCRBY', m, 'next', 1) - 1)
    redis.call('HSET', m .. ':x', ARGV[i], n)
    for gram in string.gmatch(ARGV[i + 2], '%S+') do
      local posting = redis.call('HGET', m .. ':g', gram)
      redis.call('HSET', m .. ':g', gram, posting and (posting .. ' ' .. n) or n)
    end
  end
  redis.call('HSET', m .. ':e', n, ARGV[i + 1])
end
redis.call('HINCRBY', m, 'entries', new)
redis.call('HINCRBY', m, 'bytes', more)
redis.call('HSET', m, 'updated_at', ARGV[5])
hold(m, ARGV[1], z, now + tonumber(ARGV[2]))
redis.call('EXPIREAT', KEYS[2], now + tonumber(ARGV[2]))
return {'added', new, updated}
"""
)

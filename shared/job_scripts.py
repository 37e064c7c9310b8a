"""The job store's Lua scripts: each status change or claim is one atomic call in Redis, so status only
moves forward and nothing is half-written (a script refused at maxmemory writes nothing: its first write
is the one refused). Only shared.jobs.JobStore runs them."""

# Shared by the scripts: rank of each status; a transition must raise the rank.
_RANKS = "local rank = {queued=0, running=1, succeeded=2, failed=2, cancelled=2}\n"

# KEYS: job, its route's pending set, idempotency key. ARGV: ttl, pending score ('' when not queued), id,
# queue cap (0: none), idempotency ('' when none: "<ttl> <request digest>"), job key prefix, then field/value
# pairs. One command, flat arguments (nothing to decode): cheap to send and to run, and atomic (nothing is
# half-written, even on OOM): the idempotency key, the queue cap and the insert are one step, so concurrent
# submissions can neither both create nor both pass the cap.
CREATE = """
if ARGV[5] ~= '' then
  local existing = redis.call('GET', KEYS[3])
  if existing then
    local id = string.match(existing, '^(%S+)')
    if redis.call('EXISTS', ARGV[6] .. id) == 1 then return {'exists', existing} end
  end
end
if ARGV[2] ~= '' and tonumber(ARGV[4]) > 0 and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return {'overloaded', ''}
end
redis.call('HSET', KEYS[1], unpack(ARGV, 7))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]))
if ARGV[2] ~= '' then redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3]) end
if ARGV[5] ~= '' then
  local ttl, digest = string.match(ARGV[5], '^(%S+) (%S+)$')
  redis.call('SET', KEYS[3], ARGV[3] .. ' ' .. digest, 'EX', tonumber(ttl))
end
return {'created', ''}
"""

# KEYS: job, lease, partial translations. ARGV: id, new status, now, ttl, pending-set key prefix (the job's
# route completes it), then field/value pairs.
TRANSITION = (
    _RANKS
    + """
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return {'missing', ''} end
if rank[ARGV[2]] <= rank[current] then return {'refused', current} end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if rank[ARGV[2]] == 2 then
  redis.call('HSET', KEYS[1], 'finished_at', ARGV[3])
  redis.call('HDEL', KEYS[1], 'parked')
  redis.call('ZREM', ARGV[5] .. (redis.call('HGET', KEYS[1], 'route') or ''), ARGV[1])
  redis.call('DEL', KEYS[2], KEYS[3])
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return {'ok', ARGV[2]}
"""
)

# KEYS: job, the claimant's route's pending set, lease. ARGV: id, worker, lease ms, now, max lost deliveries,
# fresh only (1: claim queued or parked jobs only), result ttl, worker_lost error JSON, lapse is loss (0: a
# running job without a lease is left to its holder, who may be alive: the claimant saw a broker outage).
# A parked job (given back by a round, see _PARK) is taken without counting a delivery.
CLAIM = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {'missing', 0}
end
local parked = false
if status == 'running' then
  if redis.call('EXISTS', KEYS[3]) == 1 then return {'leased', 0} end
  parked = redis.call('HGET', KEYS[1], 'parked') == '1'
  if not parked and (ARGV[6] == '1' or ARGV[9] == '0') then return {'leased', 0} end
elseif status ~= 'queued' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {'final', 0}
end
redis.call('ZREM', KEYS[2], ARGV[1])
local attempts
if parked then
  redis.call('HDEL', KEYS[1], 'parked')
  attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts'))
else
  attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
end
if attempts - 1 >= tonumber(ARGV[5]) then
  redis.call('HSET', KEYS[1], 'status', 'failed', 'error', ARGV[8], 'finished_at', ARGV[4])
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7]))
  redis.call('DEL', KEYS[3])
  return {'lost', attempts}
end
if status == 'queued' then redis.call('HSET', KEYS[1], 'status', 'running', 'started_at', ARGV[4]) end
redis.call('HSET', KEYS[1], 'worker', ARGV[2])
redis.call('SET', KEYS[3], ARGV[2], 'PX', tonumber(ARGV[3]))
return {'claimed', attempts}
"""

# KEYS: lease, job, lease, job, ... ARGV: worker, lease ms. Renews the leases this worker holds, and
# takes back one that expired while the job still runs on this worker (a broker freeze or restart can
# outlast a lease; the job was never lost), unless the job was parked.
RENEW = """
local renewed = 0
for i = 1, #KEYS, 2 do
  local holder = redis.call('GET', KEYS[i])
  if holder == ARGV[1] then
    redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2]))
    renewed = renewed + 1
  elseif not holder and redis.call('HGET', KEYS[i + 1], 'worker') == ARGV[1]
      and redis.call('HGET', KEYS[i + 1], 'status') == 'running'
      and redis.call('HGET', KEYS[i + 1], 'parked') ~= '1' then
    redis.call('SET', KEYS[i], ARGV[1], 'PX', tonumber(ARGV[2]))
    renewed = renewed + 1
  end
end
return renewed
"""

# KEYS: job, its route's pending set, lease. ARGV: id, worker. Gives a claimed, running job back to the
# pending set, under its submission time, for any round of its route to take without counting a lost
# delivery: a round that has run long while others wait parks its unfinished jobs (fairness), one stopped
# by its time limit parks the jobs it had taken in. Its translations so far are in its partial hash.
PARK = """
if redis.call('GET', KEYS[3]) ~= ARGV[2] then return 0 end
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[1], 'parked', '1')
redis.call('ZADD', KEYS[2], redis.call('HGET', KEYS[1], 'submitted'), ARGV[1])
return 1
"""

# KEYS: job, partial translations. ARGV: sentences done so far, of them from the cache, ttl, the job's
# warnings ('' when unchanged), then index/translation pairs of new translations. Never recreates an
# expired record.
PROGRESS = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'sentences_done', ARGV[1], 'cached_sentences', ARGV[2])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'warnings', ARGV[4]) end
if #ARGV > 4 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 5))
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[3]))
end
return 1
"""

"""The Lua scripts of the document stage's hold on the document jobs it parses and renders: taking a job (with
a lease and a fence), renewing and releasing the lease, finding lapsed ones. Only
shared.store.stage_leases.StageLeases runs them.

A take raises the job record's `fence` (the one the translation workers' claims raise: shared.store.job_scripts
FENCE), so the stage's writes for the job (parsed, rendered, failed) are refused once another stage has
taken it over. The record keeps the holder (`stage`), the phase the stage last took it in (`stage_phase`:
parsing or rendering) and that phase's takes (`stage_attempts`): every take but the first of a phase is a lost
delivery (the stage before died, stalled or was cut off)."""

from shared.store.job_scripts import FENCE

# KEYS: job, its stage lease, the staged set, its wake key. ARGV: id, holder, lease ms, max lost deliveries.
# {'final', 0, 0}: not waiting for the stage (parsed, translated, finished, gone: its message is a stale
# copy); {'leased', 0, 0}: a stage holds it in its current phase; {'taken', attempts, fence}; {'lost',
# attempts, fence}: its stages were lost too often (the caller fails it with that fence, which this take
# raised, so a stalled holder's late write is refused). A lease left from the parse does not hold the render.
TAKE = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'parsing' and status ~= 'rendering' then
  redis.call('ZREM', KEYS[3], ARGV[1])
  return {'final', 0, 0}
end
local phase = redis.call('HGET', KEYS[1], 'stage_phase')
if phase == status and redis.call('EXISTS', KEYS[2]) == 1 then return {'leased', 0, 0} end
redis.call('DEL', KEYS[4])
local attempts = 1
if phase == status then
  attempts = redis.call('HINCRBY', KEYS[1], 'stage_attempts', 1)
else
  redis.call('HSET', KEYS[1], 'stage_phase', status, 'stage_attempts', 1)
end
local fence = redis.call('HINCRBY', KEYS[1], 'fence', 1)
if attempts - 1 >= tonumber(ARGV[4]) then
  redis.call('DEL', KEYS[2])
  redis.call('ZREM', KEYS[3], ARGV[1])
  return {'lost', attempts, fence}
end
redis.call('HSET', KEYS[1], 'stage', ARGV[2])
redis.call('SET', KEYS[2], ARGV[2], 'PX', tonumber(ARGV[3]))
local t = redis.call('TIME')
redis.call('ZADD', KEYS[3], t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[3]), ARGV[1])
return {'taken', attempts, fence}
"""

# KEYS: stage lease, job. ARGV: holder, lease ms, fence. 1 when renewed: the holder's lease, or one that
# lapsed while the job still waits for this holder (a broker freeze or restart can outlast a lease), unless
# the job was taken (or claimed) since.
RENEW = (
    FENCE
    + """
if fenced(KEYS[2], ARGV[3]) then return 0 end
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
if holder or redis.call('HGET', KEYS[2], 'stage') ~= ARGV[1] then return 0 end
local status = redis.call('HGET', KEYS[2], 'status')
if status ~= 'parsing' and status ~= 'rendering' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return 1
"""
)

# KEYS: stage lease, job, the staged set. ARGV: fence, id, holder, '1' when the take does not count (the task
# is retried: a broker outage). The holder's lease goes; the job leaves the staged set unless another stage
# took it since (its take is the set's entry now).
RELEASE = (
    FENCE
    + """
if redis.call('GET', KEYS[1]) == ARGV[3] then redis.call('DEL', KEYS[1]) end
if fenced(KEYS[2], ARGV[1]) then
  local status = redis.call('HGET', KEYS[2], 'status')
  if status ~= 'parsing' and status ~= 'rendering' then redis.call('ZREM', KEYS[3], ARGV[2]) end
  return 0
end
redis.call('ZREM', KEYS[3], ARGV[2])
if ARGV[4] == '1' then redis.call('HINCRBY', KEYS[2], 'stage_attempts', -1) end
return 1
"""
)

# KEYS: the staged set. ARGV: job key prefix, stage lease key prefix, limit. Document jobs still parsing or
# rendering whose stage lease lapsed (their stage died, stalled or was cut off), oldest deadline first: their
# Celery message waits at the dead stage for the broker's visibility timeout, so a live stage sends them again
# (worker.documents.stage_lease). Keeps the set itself: a renewed lease moves its job to its new deadline, a
# job the stage is done with leaves.
LAPSED = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local lapsed = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))) do
  local ttl = redis.call('PTTL', ARGV[2] .. id)
  local status = redis.call('HGET', ARGV[1] .. id, 'status')
  if ttl > 0 then
    redis.call('ZADD', KEYS[1], now + ttl, id)
  elseif status == 'parsing' or status == 'rendering' then
    table.insert(lapsed, id)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return lapsed
"""

"""The job store's Lua scripts for workers: claiming a job (with its lease and fence), renewing and releasing
leases, finding lapsed ones, parking a job and recording progress. Only shared.store.job_claims.JobClaims runs
them; the pieces they share with the other scripts are in shared.store.job_scripts."""

from shared.store.job_events import EMIT
from shared.store.job_scripts import FENCE, OUTBOX

# KEYS: job, the claimant's route's pending set, lease, the route's running set (job ids by lease deadline in
# Redis time, ms: see LAPSED), the callback due set, statistics (a job failed as lost counts in
# `jobs_failed`). ARGV: id, worker,
# lease ms, now, max lost deliveries, fresh only (1: claim queued or parked jobs only), result ttl,
# worker_lost error JSON, lapse is loss (0: a running job without a lease is left to its holder, who may be
# alive: the claimant saw a broker outage).
# A parked job (given back by a round, see PARK) is taken without counting a delivery. A claim returns the
# job's new fence (see FENCE).
# KEYS[5]: the callback due set (OUTBOX); KEYS[6]: statistics; KEYS[7]: its events (EMIT: each claim, a
# takeover's too, and a loss is a `progress` event).
CLAIM = (
    EMIT
    + OUTBOX
    + """
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
  callback_due(KEYS[1], ARGV[1], KEYS[5])
  redis.call('HINCRBY', KEYS[6], 'jobs_failed', 1)
  emit_progress(KEYS[1], KEYS[7])
  return {'lost', attempts}
end
if status == 'queued' then redis.call('HSET', KEYS[1], 'status', 'running', 'started_at', ARGV[4]) end
local fence = redis.call('HINCRBY', KEYS[1], 'fence', 1)
redis.call('HSET', KEYS[1], 'worker', ARGV[2])
redis.call('SET', KEYS[3], ARGV[2], 'PX', tonumber(ARGV[3]))
local now = redis.call('TIME')
redis.call('ZADD', KEYS[4], now[1] * 1000 + math.floor(now[2] / 1000) + tonumber(ARGV[3]), ARGV[1])
emit_progress(KEYS[1], KEYS[7])
return {'claimed', attempts, fence}
"""
)

# KEYS: lease, job, lease, job, ... ARGV: worker, lease ms, then each job's fence. Renews the leases this
# worker holds, and takes back one that expired while the job still runs on this worker (a broker freeze or
# restart can outlast a lease; the job was never lost), unless the job was parked or claimed again since.
RENEW = (
    FENCE
    + """
local renewed = 0
for i = 1, #KEYS, 2 do
  local holder = redis.call('GET', KEYS[i])
  if fenced(KEYS[i + 1], ARGV[2 + (i + 1) / 2]) then
    -- claimed again since: no longer this worker's, whatever its lease says
  elseif holder == ARGV[1] then
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
)

# KEYS: job, its route's pending set, lease. ARGV: id, worker, fence. Gives a claimed, running job back to the
# pending set, under its submission time, for any round of its route to take without counting a lost
# delivery: a round that has run long while others wait parks its unfinished jobs (fairness), one stopped
# by its time limit parks the jobs it had taken in. Its translations so far are in its partial hash.
PARK = (
    FENCE
    + """
if fenced(KEYS[1], ARGV[3]) or redis.call('GET', KEYS[3]) ~= ARGV[2] then return 0 end
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[1], 'parked', '1')
redis.call('ZADD', KEYS[2], redis.call('HGET', KEYS[1], 'submitted'), ARGV[1])
return 1
"""
)

# KEYS: job, partial translations, its events (EMIT). ARGV: fence, ttl, n, m, then the record's n field/value
# pairs (its progress: sentences done, of them from the cache, its warnings when new), then m `sentence`
# events (one per new translation), then the partial hash's field/value pairs (new translations by sentence
# index, their scores); with new sentences, a `progress` event follows theirs. Never recreates an expired
# record. Returns 'ok', 'fenced' or 'stopped' (the job is not running).
PROGRESS = (
    EMIT
    + FENCE
    + """
if fenced(KEYS[1], ARGV[1]) then return 'fenced' end
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 'stopped' end
local last = 4 + 2 * tonumber(ARGV[3])
local m = tonumber(ARGV[4])
if last > 4 then redis.call('HSET', KEYS[1], unpack(ARGV, 5, last)) end
if #ARGV > last + m then
  redis.call('HSET', KEYS[2], unpack(ARGV, last + m + 1))
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
end
for i = last + 1, last + m do emit(KEYS[1], KEYS[3], 'sentence', ARGV[i]) end
if m > 0 then emit_progress(KEYS[1], KEYS[3]) end
return 'ok'
"""
)

# KEYS: job, lease. ARGV: fence. Lets a running job's lease go (its next claim counts a lost delivery), unless
# the job was claimed again since (the lease is then another worker's).
RELEASE = FENCE + "if fenced(KEYS[1], ARGV[1]) then return 0 end\nreturn redis.call('DEL', KEYS[2])\n"

# KEYS: a route's running set. ARGV: job key prefix, lease key prefix, limit. Running jobs whose lease lapsed
# (their worker died, stalled or was cut off) and that nobody claimed since, oldest deadline first; their
# Celery message may wait for the broker's visibility timeout, so a live worker wakes them
# (worker.translation.liveness.wakeups.Sweeps). Keeps the set itself: a renewed lease moves its job to its
# new deadline, a finished or parked job leaves.
LAPSED = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local lapsed = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))) do
  local ttl = redis.call('PTTL', ARGV[2] .. id)
  local job = ARGV[1] .. id
  if ttl > 0 then
    redis.call('ZADD', KEYS[1], now + ttl, id)
  elseif redis.call('HGET', job, 'status') == 'running' and redis.call('HGET', job, 'parked') ~= '1' then
    table.insert(lapsed, id)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return lapsed
"""

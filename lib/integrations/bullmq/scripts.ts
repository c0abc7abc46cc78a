// The Lua scripts that keep a batch's state in Redis. Each runs atomically in one round trip,
// so however many workers ask at once, call counts never pass their caps and a run's report
// is written once.

/**
 * Shared prelude: reads the budget hash (KEYS[1]) and finds the first spent limit, in the
 * order `spentLimit` checks them. A limit is spent when usage reaches it (≥). `maxWallMs` is
 * the batch's elapsed time, on Redis's clock, so workers' clocks need not agree.
 */
const SPENT = `
local b = redis.call('HMGET', KEYS[1], 'c', 'i', 'o', 'l', 't', 'st', 'mc', 'mt', 'mtc', 'mlc', 'mw')
local cost = tonumber(b[1]) or 0
local tokens = (tonumber(b[2]) or 0) + (tonumber(b[3]) or 0)
local llm = tonumber(b[4]) or 0
local tool = tonumber(b[5]) or 0
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local wall = nowMs - (tonumber(b[6]) or nowMs)
local function over(used, max) return max ~= nil and used >= max end
local spent = false
if over(cost, tonumber(b[7])) then spent = 'maxCostUsd'
elseif over(tokens, tonumber(b[8])) then spent = 'maxTokens'
elseif over(tool, tonumber(b[9])) then spent = 'maxToolCalls'
elseif over(llm, tonumber(b[10])) then spent = 'maxLlmCalls'
elseif over(wall, tonumber(b[11])) then spent = 'maxWallMs'
end
local function usage() return {b[1] or '0', b[2] or '0', b[3] or '0', tostring(llm), tostring(tool), tostring(wall)} end
local function spentReply()
  redis.call('HSETNX', KEYS[1], 'x', spent)
  local u = usage()
  return {spent, u[1], u[2], u[3], u[4], u[5], u[6]}
end
`;

/**
 * reserve: KEYS budget, runUsage; ARGV kind ('l' | 't'), run index.
 * Returns `{''}` and counts the call, or the spent limit and the usage `{limit, c, i, o, l, t, wall}`.
 */
export const RESERVE = `${SPENT}
if spent then return spentReply() end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('HINCRBY', KEYS[2], ARGV[2] .. ':' .. ARGV[1], 1)
return {''}
`;

/**
 * charge: KEYS budget, runUsage; ARGV run index, cost, input tokens, output tokens.
 * Adds the usage to the batch and to the run, then answers as reserve does (without counting a call).
 */
export const CHARGE = `
local idx = ARGV[1]
if tonumber(ARGV[2]) ~= 0 then
  redis.call('HINCRBYFLOAT', KEYS[1], 'c', ARGV[2])
  redis.call('HINCRBYFLOAT', KEYS[2], idx .. ':c', ARGV[2])
end
if tonumber(ARGV[3]) ~= 0 then
  redis.call('HINCRBY', KEYS[1], 'i', ARGV[3])
  redis.call('HINCRBY', KEYS[2], idx .. ':i', ARGV[3])
end
if tonumber(ARGV[4]) ~= 0 then
  redis.call('HINCRBY', KEYS[1], 'o', ARGV[4])
  redis.call('HINCRBY', KEYS[2], idx .. ':o', ARGV[4])
end
${SPENT}
if spent then return spentReply() end
return {''}
`;

/**
 * begin: KEYS budget, started, results, events, abort; ARGV index, worker, retryLostRuns, the worker's concurrency, the job's lock token.
 * Decides, atomically, what a worker that took a run's job does with it:
 * - `{'done'}`: the run is already reported (a job delivered twice); nothing to do.
 * - `{'lost', startJson}`: an earlier start never reported and lost runs are not re-run (or
 *   not again): report it lost.
 * - `{'aborted', reason}` / `{'stopped', limit, usage…}`: skip it.
 * - `{'run', attempt}`: run it; the start is recorded and an event pushed.
 */
export const BEGIN = `${SPENT}
local idx = ARGV[1]
if redis.call('HEXISTS', KEYS[3], idx) == 1 then return {'done'} end
local prev = redis.call('HGET', KEYS[2], idx)
local attempt = 1
if prev then
  local p = cjson.decode(prev)
  -- The same pick-up asking again (its reply was lost when Redis restarted): go on with it.
  if p.k == ARGV[5] then return {'run', tostring(p.a)} end
  if p.a > tonumber(ARGV[3]) then return {'lost', prev} end
  attempt = p.a + 1
end
local aborted = redis.call('GET', KEYS[5])
if aborted then return {'aborted', aborted} end
if spent then
  local r = spentReply()
  table.insert(r, 1, 'stopped')
  return r
end
redis.call('HSET', KEYS[2], idx, cjson.encode({w = ARGV[2], a = attempt, k = ARGV[5]}))
redis.call('RPUSH', KEYS[4], cjson.encode({t = 's', i = tonumber(idx), w = ARGV[2], a = attempt, c = tonumber(ARGV[4])}))
return {'run', tostring(attempt)}
`;

/**
 * record: KEYS results, events; ARGV index, report JSON, event JSON.
 * Writes the run's report unless one is there already; returns 1 when this one counts.
 */
export const RECORD = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[3])
  return 1
end
return 0
`;

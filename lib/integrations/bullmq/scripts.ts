// The Lua scripts that keep a batch's state in Redis. Each runs atomically in one round trip,
// so however many workers ask at once, call counts never pass their caps and a run's report
// is written once.
import { LIMIT_NAMES, RESPONSE_FIELD_NAMES, USAGE_FIELD_NAMES } from '../../internal/fieldLists';
import { LIMITS } from '../../internal/limits';
import { USAGE_FIELDS, type UsageFieldName } from '../../internal/usageFields';
import { TIME_INDEX, USAGE_CODES } from './budgetFields';

/** A Lua string literal. */
const lua = (text: string): string => `'${text.replace(/[\\']/g, '\\$&')}'`;

/** Usage field `key`, as a number in the prelude's `n`. */
const n = (key: UsageFieldName): string => `n[${USAGE_FIELD_NAMES.indexOf(key) + 1}]`;

/**
 * Shared prelude, generated from the lists of usage fields and limits: reads the budget hash
 * (KEYS[1]) — a counter per usage field, the batch's start, a cap per limit — and finds the
 * first spent limit, in the order `spentLimit` checks them. A limit is spent when the sum of
 * the fields it measures reaches it (≥). Wall time is the batch's elapsed time, on Redis's
 * clock, so workers' clocks need not agree. `u` is the usage as strings, in the order of
 * USAGE_FIELD_NAMES, as replies carry it.
 */
const SPENT = `
local b = redis.call('HMGET', KEYS[1], ${[...USAGE_CODES, ...LIMIT_NAMES.map((limit) => LIMITS[limit].code)].map(lua).join(', ')})
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local u = {}
for k = 1, ${USAGE_CODES.length} do u[k] = b[k] or '0' end
u[${TIME_INDEX + 1}] = tostring(nowMs - (tonumber(b[${TIME_INDEX + 1}]) or nowMs))
local n = {}
for k = 1, ${USAGE_CODES.length} do n[k] = tonumber(u[k]) or 0 end
local function over(used, max) return max ~= nil and used >= max end
local spent = false
${LIMIT_NAMES.map((limit, i) => `${i === 0 ? 'if' : 'elseif'} over(${LIMITS[limit].of.map(n).join(' + ')}, tonumber(b[${USAGE_CODES.length + i + 1}])) then spent = ${lua(limit)}`).join('\n')}
end
local function spentReply()
  redis.call('HSETNX', KEYS[1], 'x', spent)
  local r = {spent}
  for k = 1, ${USAGE_CODES.length} do r[k + 1] = u[k] end
  return r
end
`;

/**
 * reserve: KEYS budget, runUsage; ARGV the call's counter (`CALL_CODES`), run index.
 * Returns `{''}` and counts the call, or the spent limit and the usage: `{limit, …usage}`, in the order of USAGE_FIELD_NAMES.
 */
export const RESERVE = `${SPENT}
if spent then return spentReply() end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('HINCRBY', KEYS[2], ARGV[2] .. ':' .. ARGV[1], 1)
return {''}
`;

/**
 * charge: KEYS budget, runUsage; ARGV run index, then each usage field a response reports
 * (RESPONSE_FIELD_NAMES, in order). Adds them to the batch and to the run, then answers as
 * reserve does (without counting a call).
 */
export const CHARGE = `
local idx = ARGV[1]
${RESPONSE_FIELD_NAMES.map((key, i) => {
  const { code } = USAGE_FIELDS[key];
  const add = 'dollars' in USAGE_FIELDS[key] ? 'HINCRBYFLOAT' : 'HINCRBY';
  return `if tonumber(ARGV[${i + 2}]) ~= 0 then
  redis.call('${add}', KEYS[1], ${lua(code)}, ARGV[${i + 2}])
  redis.call('${add}', KEYS[2], idx .. ':' .. ${lua(code)}, ARGV[${i + 2}])
end`;
}).join('\n')}
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

// The Lua scripts that keep a batch's state in Redis. Each runs atomically in one round trip,
// so however many workers ask at once, call counts never pass their caps, a strict dollar cap
// is never passed, and a run's report is written once.
//
// Fail closed: every script first checks that the batch's budget is in Redis (its start, `st`,
// written by submitBatch and by nothing else). When it is gone — Redis restarted without
// persistence, the key evicted or expired — the script writes nothing (no key is ever
// recreated without its expiry) and answers `!missing`, which the workers turn into an error
// naming the key: a run never goes on under "no limit".
import { LIMIT_NAMES, CHARGE_FIELD_NAMES, USAGE_FIELD_NAMES } from '../../internal/fieldLists';
import { LIMITS } from '../../internal/limits';
import { USAGE_FIELDS, type UsageFieldName } from '../../internal/usageFields';
import {
  CALL_CODES,
  HELD_CODE,
  PAUSED_CODE,
  PAUSES_CODE,
  RAISES_CODE,
  WRAP_CODES,
  WRAP_HELD_CODE,
  STRICT_CODE,
  TIME_INDEX,
  USAGE_CODES,
} from './budgetFields';
import { stepFence } from './stepFence';

/** A Lua string literal. */
const lua = (text: string): string => `'${text.replace(/[\\']/g, '\\$&')}'`;

/** Usage field `key`, as a number in the prelude's `n`. */
const n = (key: UsageFieldName): string => `n[${USAGE_FIELD_NAMES.indexOf(key) + 1}]`;

/** The largest whole number a double holds exactly: no counter may pass it (2^53 − 1). */
export const MAX_COUNTER = Number.MAX_SAFE_INTEGER;

/** Answers `!missing` when the budget hash (KEYS[1]) is gone: see the top of this file. */
export const MISSING = `
if redis.call('HEXISTS', KEYS[1], ${lua(USAGE_CODES[TIME_INDEX]!)}) == 0 then return {'!missing'} end
`;

/**
 * Shared prelude, generated from the lists of usage fields and limits: reads the budget hash
 * (KEYS[1]) — a counter per usage field, the batch's start, a cap per limit — and finds the
 * first spent limit, in the order `spentLimit` checks them. A limit is spent when the sum of
 * the fields it measures reaches it (≥). Wall time is the batch's elapsed time, on Redis's
 * clock, so workers' clocks need not agree. `u` is the usage as strings, in the order of
 * USAGE_FIELD_NAMES, as replies carry it.
 */
const SPENT = `
local b = redis.call('HMGET', KEYS[1], ${[...USAGE_CODES, ...LIMIT_NAMES.map((limit) => LIMITS[limit].code), PAUSES_CODE].map(lua).join(', ')})
-- A pausing dollar cap is never spent: it refuses holds instead (step answers '!pause').
local pauses = b[${USAGE_CODES.length + LIMIT_NAMES.length + 1}] == '1'
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local u = {}
for k = 1, ${USAGE_CODES.length} do u[k] = b[k] or '0' end
u[${TIME_INDEX + 1}] = tostring(nowMs - (tonumber(b[${TIME_INDEX + 1}]) or nowMs))
local n = {}
for k = 1, ${USAGE_CODES.length} do n[k] = tonumber(u[k]) or 0 end
local function over(used, max) return max ~= nil and used >= max end
local spent = false
${LIMIT_NAMES.map((limit, i) => `${i === 0 ? 'if' : 'elseif'} ${limit === 'maxCostUsd' ? 'not pauses and ' : ''}over(${LIMITS[limit].of.map(n).join(' + ')}, tonumber(b[${USAGE_CODES.length + i + 1}])) then spent = ${lua(limit)}`).join('\n')}
end
-- A response passed its bound under a strict cap somewhere in the batch (TRIP): every limit is spent.
local tripped = redis.call('HGET', KEYS[1], 'tb')
if tripped then spent = 'bound' end
local function spentReply()
  redis.call('HSETNX', KEYS[1], 'x', spent)
  local r = {spent}
  for k = 1, ${USAGE_CODES.length} do r[k + 1] = u[k] end
  if tripped then r[${USAGE_CODES.length} + 2] = tripped end
  return r
end
`;

/** The cost cap's field, and the index of cost among the usage fields (1-based, for `n`). */
const COST_CAP = LIMITS.maxCostUsd.code;
const COST = USAGE_FIELD_NAMES.indexOf('costUsd') + 1;
/** ARGV positions of step: run, the response fields, then the deferred tool calls, the release, the call's counter, the hold. */
const A_TOOLS = CHARGE_FIELD_NAMES.length + 2;
const A_RELEASE = A_TOOLS + 1;
const A_CALL = A_TOOLS + 2;
const A_HOLD = A_TOOLS + 3;
/** Then what the call does with the run's final-call hold (`WRAP_CODES`), and that hold's dollars. */
const A_WRAP = A_TOOLS + 4;
const A_WRAP_USD = A_TOOLS + 5;
/** Then the attempt of the run that sends the step ('' when none is given: never fenced). */
const A_ATTEMPT = A_TOOLS + 6;
/** The usage fields of billed and uncertain dollars. */
const COST_CODE = USAGE_FIELDS.costUsd.code;
const UNCERTAIN_CODE = USAGE_FIELDS.uncertainUsd.code;

/**
 * step: KEYS budget, runUsage; ARGV run index, each usage field a response reports
 * (CHARGE_FIELD_NAMES, in order), tool calls made without a round trip of their own, the
 * dollars held earlier to release, the counter of the call to reserve (`CALL_CODES`, or '' to
 * only charge), the dollars to hold for it, then (optional, `budget.wrapUp`) what the call does
 * with the run's final-call hold (`WRAP_CODES`: keep the given dollars beside an ordinary call,
 * swap the hold for a final call's, drop it and every hold the run has left as the run ends,
 * write the run off as lost or take it over: its calls' holds charged as uncertain, then
 * dropped) and those dollars ('' and 0 for none), then (optional) the run's attempt. One round
 * trip does what a run needs between two
 * calls: charges the last response and releases its hold, then reserves the next call — so
 * the next reservation rides on the previous charge.
 *
 * Replies: `{''}` room (the call is counted); `{limit, …usage}` a limit is spent (the batch
 * stops); `{'!fit', held, …usage}` the call's hold does not fit under a strict `maxCostUsd`
 * (spent + held + hold > cap: the call is not made, other smaller ones may be);
 * `{'!pause', held, …usage, raises, cap}` the same under a pausing cap (`whenSpent: 'pause'`):
 * the batch is marked paused, and the run waits for a raise after its `raises`th;
 * `{'!wrap', held, …usage}` an ordinary call that does not fit beside the final-call holds of
 * every run (this one's new one among them): not counted, and the run's earlier final-call
 * hold stays for its final call;
 * `{'!nohold', held, …usage}` a strict cap and no hold given; `{'!missing'}`;
 * `{'!stale', fence}` the attempt is below the run's fence (stepFence.ts): its charge is
 * counted, nothing else is done;
 * `{'!bad', message}` an amount that is not a number, negative, or would take a counter
 * past 2^53 − 1 (nothing is written then).
 */
export const STEP = `${MISSING}
local idx = ARGV[1]
local function bad(what, value) return {'!bad', what .. ' = ' .. tostring(value) .. ': expected a non-negative number keeping its total within ${MAX_COUNTER}'} end
local function amount(k, what)
  local v = tonumber(ARGV[k])
  if v == nil or v ~= v or v < 0 or v > ${MAX_COUNTER} then return nil, bad(what, ARGV[k]) end
  return v
end
local add = {}
${[
  ...CHARGE_FIELD_NAMES.map((key, i) => [USAGE_FIELDS[key].code, i + 2, key] as const),
  [CALL_CODES.tool, A_TOOLS, 'toolCalls'] as const,
]
  .map(
    ([code, k, key]) => `do
  local v, err = amount(${k}, ${lua(key)})
  if err then return err end
  if v ~= 0 then
    if (tonumber(redis.call('HGET', KEYS[1], ${lua(code)})) or 0) + v > ${MAX_COUNTER} then return bad(${lua(`total ${key}`)}, v) end
    add[#add + 1] = {${lua(code)}, ARGV[${k}], ${'dollars' in (USAGE_FIELDS[key as UsageFieldName] ?? {}) ? 'true' : 'false'}}
  end
end`,
  )
  .join('\n')}
local release, err = amount(${A_RELEASE}, 'release')
if err then return err end
local hold
hold, err = amount(${A_HOLD}, 'hold')
if err then return err end
local wmode = ARGV[${A_WRAP}] or ''
local wkey = idx .. ':' .. ${lua(WRAP_HELD_CODE)}
local wold = tonumber(redis.call('HGET', KEYS[2], wkey)) or 0
local hkey = idx .. ':' .. ${lua(HELD_CODE)}
local function unhold(key, field, by)
  local left = tonumber(redis.call('HINCRBYFLOAT', key, field, -by))
  if left < 1e-9 then redis.call('HDEL', key, field) end
end
local function count(code, by)
  redis.call('HINCRBYFLOAT', KEYS[1], code, by)
  redis.call('HINCRBYFLOAT', KEYS[2], idx .. ':' .. code, by)
end
${stepFence(A_ATTEMPT)}
-- A write-off or a takeover charges the holds of the run's calls (below): the dollars a takeover
-- read in the earlier attempts' records count only beyond them, and not at all under a strict cap,
-- where every dollar a run may spend is held until its charge lands (a charge that landed after
-- the records were read would be counted twice).
local calls = 0
if wmode == ${lua(WRAP_CODES.lost)} then
  calls = math.max(0, (tonumber(redis.call('HGET', KEYS[2], hkey)) or 0) - release - wold)
  if calls < 1e-9 then calls = 0 end
  local strictCap = redis.call('HGET', KEYS[1], ${lua(STRICT_CODE)}) == '1'
  for _, a in ipairs(add) do
    if a[1] == ${lua(COST_CODE)} or a[1] == ${lua(UNCERTAIN_CODE)} then
      a[2] = strictCap and 0 or math.max(0, tonumber(a[2]) - calls)
    end
  end
end
for _, a in ipairs(add) do
  local cmd = a[3] and 'HINCRBYFLOAT' or 'HINCRBY'
  if a[2] ~= 0 then
    redis.call(cmd, KEYS[1], a[1], a[2])
    redis.call(cmd, KEYS[2], idx .. ':' .. a[1], a[2])
  end
end
if stale then return stale end
if release > 0 then
  unhold(KEYS[1], ${lua(HELD_CODE)}, release)
  unhold(KEYS[2], idx .. ':' .. ${lua(HELD_CODE)}, release)
end
-- The run's final-call hold (budget.wrapUp): what it holds now, and what it is to hold after this call.
local wnew = wold
if wmode == ${lua(WRAP_CODES.keep)} then
  wnew, err = amount(${A_WRAP_USD}, 'wrapUp hold')
  if err then return err end
elseif wmode == ${lua(WRAP_CODES.final)} then
  wnew = 0
end
local function rewrap()
  if wnew == wold then return end
  local by = wnew - wold
  if by > 0 then
    redis.call('HINCRBYFLOAT', KEYS[1], ${lua(HELD_CODE)}, by)
    redis.call('HINCRBYFLOAT', KEYS[2], idx .. ':' .. ${lua(HELD_CODE)}, by)
  else
    unhold(KEYS[1], ${lua(HELD_CODE)}, -by)
    unhold(KEYS[2], idx .. ':' .. ${lua(HELD_CODE)}, -by)
  end
  if wnew > 0 then redis.call('HSET', KEYS[2], wkey, wnew) else redis.call('HDEL', KEYS[2], wkey) end
end
-- A run that ends lets go of its final call's hold, and of every hold it has left (a reservation
-- whose reply was lost: its call was never made), whatever else is spent. A run written off as
-- lost, or taken over, first charges the holds of its calls as uncertain: each may have left, or
-- may still leave (its worker may live on), at its worst case. They become the run's credit, and
-- the earlier attempts are fenced (stepFence.ts).
if wmode == ${lua(WRAP_CODES.drop)} or wmode == ${lua(WRAP_CODES.lost)} then
  if wmode == ${lua(WRAP_CODES.lost)} then
    if calls > 0 then
      count(${lua(COST_CODE)}, calls)
      count(${lua(UNCERTAIN_CODE)}, calls)
      redis.call('HINCRBYFLOAT', KEYS[2], ckey, calls)
    end
    if attempt ~= nil and attempt > fence then redis.call('HSET', KEYS[2], fkey, attempt) end
  end
  wnew = 0
  rewrap()
  wold = 0
  local left = tonumber(redis.call('HGET', KEYS[2], hkey)) or 0
  if left > 0 then
    unhold(KEYS[1], ${lua(HELD_CODE)}, left)
    unhold(KEYS[2], hkey, left)
  end
end
${SPENT}
if ARGV[${A_CALL}] == '' then
  if spent then return spentReply() end
  return {''}
end
if spent then return spentReply() end
local strict = redis.call('HMGET', KEYS[1], ${lua(HELD_CODE)}, ${lua(STRICT_CODE)}, ${lua(COST_CAP)})
local held = tonumber(strict[1]) or 0
local llm = ARGV[${A_CALL}] == ${lua(CALL_CODES.llm)}
if not llm then wnew = wold end
-- Spent, held, and the call's hold, with the run's final-call hold as it is to be after the call.
local after = n[${COST}] + held + (wnew - wold) + hold
local r = {'!fit', tostring(held)}
for k = 1, ${USAGE_CODES.length} do r[k + 2] = u[k] end
if llm and wmode == ${lua(WRAP_CODES.keep)} and strict[3] and after > tonumber(strict[3]) then
  -- The ordinary call does not fit beside the final calls' holds: the run wraps up instead.
  r[1] = '!wrap'
  return r
end
if strict[2] == '1' and llm then
  if hold == 0 then r[1] = '!nohold' end
  if hold == 0 then return r end
  if after > tonumber(strict[3]) then
    if pauses then
      -- The cap pauses: the batch waits for a raise; the reply says which raise it waits after.
      local raises = redis.call('HGET', KEYS[1], ${lua(RAISES_CODE)}) or '0'
      redis.call('HSET', KEYS[1], ${lua(PAUSED_CODE)}, raises)
      r[1] = '!pause'
      r[#r + 1] = raises
      r[#r + 1] = strict[3]
    end
    return r
  end
end
redis.call('HINCRBY', KEYS[1], ARGV[${A_CALL}], 1)
redis.call('HINCRBY', KEYS[2], idx .. ':' .. ARGV[${A_CALL}], 1)
if hold > 0 then
  redis.call('HINCRBYFLOAT', KEYS[1], ${lua(HELD_CODE)}, hold)
  redis.call('HINCRBYFLOAT', KEYS[2], idx .. ':' .. ${lua(HELD_CODE)}, hold)
end
rewrap()
return {''}
`;

/**
 * figures: KEYS budget. The batch's usage (strings, in the order of USAGE_FIELD_NAMES, wall
 * time on Redis's clock), then its dollar cap in force ('' when none): what `budget.visible`'s
 * note says is left. Writes nothing; `{'!missing'}` when the budget is gone.
 */
export const FIGURES = `${MISSING}${SPENT}
local r = {}
for k = 1, ${USAGE_CODES.length} do r[k] = u[k] end
r[#r + 1] = redis.call('HGET', KEYS[1], ${lua(COST_CAP)}) or ''
return r
`;

/** Kept under their old names: reserve and charge are the one script, `step`. */
export const RESERVE = STEP;
export const CHARGE = STEP;

/**
 * begin: KEYS budget, started, results, events, abort, waiting; ARGV index, worker, retryLostRuns, the worker's concurrency, the job's lock token.
 * Decides, atomically, what a worker that took a run's job does with it:
 * - `{'!missing'}`: the batch's budget is gone from Redis; nothing is written.
 * - `{'done'}`: the run is already reported (a job delivered twice); nothing to do.
 * - `{'lost', startJson}`: an earlier start never reported and lost runs are not re-run (or
 *   not again): report it lost.
 * - `{'aborted', reason}` / `{'stopped', limit, usage…}`: skip it.
 * - `{'wait', raises}`: the batch is paused at its cap (no raise since a call was refused):
 *   not started; its index joins the waiting set, whose jobs a raise brings back.
 * - `{'run', attempt}`: run it; the start is recorded and an event pushed.
 */
export const BEGIN = `${MISSING}${SPENT}
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
-- Only a start waits: a run lost and begun again has its place already.
if pauses and not prev and redis.call('HEXISTS', KEYS[1], ${lua(PAUSED_CODE)}) == 1 then
  redis.call('SADD', KEYS[6], idx)
  return {'wait', redis.call('HGET', KEYS[1], ${lua(RAISES_CODE)}) or '0'}
end
redis.call('HSET', KEYS[2], idx, cjson.encode({w = ARGV[2], a = attempt, k = ARGV[5]}))
redis.call('RPUSH', KEYS[4], cjson.encode({t = 's', i = tonumber(idx), w = ARGV[2], a = attempt, c = tonumber(ARGV[4])}))
return {'run', tostring(attempt)}
`;

/** The budget fields of the batch's task count and of how long its keys live once every run is reported. */
export const COUNT_CODE = 'n';
export const EXPIRE_CODE = 'e';

/**
 * Once every run is reported (KEYS as `recordKeys` orders them), every key of the batch
 * expires after the budget's `e` milliseconds: the batch's keys go away on their own, even
 * when its producer is gone.
 */
const ENDED = `
local function ended()
  local f = redis.call('HMGET', KEYS[1], ${lua(COUNT_CODE)}, ${lua(EXPIRE_CODE)})
  if f[2] and f[1] and redis.call('HLEN', KEYS[2]) >= tonumber(f[1]) then
    for k = 1, #KEYS do redis.call('PEXPIRE', KEYS[k], f[2]) end
  end
end
`;

/**
 * record: KEYS as `recordKeys` orders them (budget, results, events, started, then the rest);
 * ARGV index, report JSON, event JSON, then (optional) the attempt that ran it. Writes the run's
 * report unless one is there already; returns 1 when this one counts, 0 when another was first,
 * -1 when the batch's budget is gone (nothing is written), -2 when the attempt is below the last
 * one `begin` started (it was taken over: the later attempt reports the run).
 */
export const RECORD = `${ENDED}
if redis.call('HEXISTS', KEYS[1], ${lua(USAGE_CODES[TIME_INDEX]!)}) == 0 then return -1 end
if ARGV[4] then
  local start = redis.call('HGET', KEYS[4], ARGV[1])
  if start and cjson.decode(start).a > tonumber(ARGV[4]) then return -2 end
end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 1 then
  redis.call('RPUSH', KEYS[3], ARGV[3])
  ended()
  return 1
end
return 0
`;

/**
 * skip: KEYS as `recordKeys` orders them; ARGV pairs of index and skipped report JSON.
 * Records many skipped runs in one round trip: each not reported and never started. A run
 * started already is left to its worker (running, or lost and waiting for `begin` to decide).
 * Their jobs stay queued: a worker that takes one finds it reported (`begin` answers `done`).
 * Returns how many were recorded, or -1 when the batch's budget is gone.
 */
export const SKIP = `${ENDED}
if redis.call('HEXISTS', KEYS[1], ${lua(USAGE_CODES[TIME_INDEX]!)}) == 0 then return -1 end
local recorded = 0
for k = 1, #ARGV, 2 do
  local idx = ARGV[k]
  if redis.call('HEXISTS', KEYS[2], idx) == 0 and redis.call('HEXISTS', KEYS[4], idx) == 0 then
    redis.call('HSET', KEYS[2], idx, ARGV[k + 1])
    redis.call('RPUSH', KEYS[3], '{"t":"f","i":' .. idx .. ',"r":' .. ARGV[k + 1] .. '}')
    recorded = recorded + 1
  end
end
ended()
return recorded
`;

/**
 * create: KEYS meta, ids, budget; ARGV meta JSON, ids JSON, then budget field/value pairs.
 * Creates a batch unless its meta is there already (then returns 0: the caller resumes it);
 * the budget's start is Redis's time now. Returns 1 when created.
 */
export const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = redis.call('TIME')
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
local fields = {${lua(USAGE_CODES[TIME_INDEX]!)}, tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)}
for k = 3, #ARGV do fields[#fields + 1] = ARGV[k] end
redis.call('HSET', KEYS[3], unpack(fields))
return 1
`;

/**
 * trip: KEYS budget; ARGV why. A response passed its bound under the batch's strict cap, so the
 * cap cannot be kept: every worker's next step (and every run not begun) meets the stop, which
 * names why. The first trip's reason stays.
 */
export const TRIP = `
${MISSING}
redis.call('HSETNX', KEYS[1], 'tb', ARGV[1])
redis.call('HSETNX', KEYS[1], 'x', 'bound')
return 1
`;

/**
 * raise: KEYS budget, events, waiting; ARGV the new cap (USD), who asks (a JSON string).
 * Raises a pausing batch's dollar cap, atomically: the runs parked at it try their call again
 * and the tasks that waited start. Replies `{'ok', raises, fromUsd, at, …indexes that waited}`
 * (their jobs are to be brought back), or `{'!pause'}` (the batch does not pause at its cap),
 * `{'!low', cap, spent, held}` (the new cap is not above the one in force), `{'!tripped', why}`
 * (a response passed its bound: the batch has stopped for good), `{'!missing'}`. The raise goes
 * on the batch's events, for every report.
 */
export const RAISE = `${MISSING}
local f = redis.call('HMGET', KEYS[1], ${lua(PAUSES_CODE)}, ${lua(COST_CAP)}, ${lua(USAGE_CODES[COST - 1]!)}, ${lua(HELD_CODE)}, 'tb')
if f[1] ~= '1' or not f[2] then return {'!pause'} end
if f[5] then return {'!tripped', f[5]} end
local to = tonumber(ARGV[1])
if to == nil or not (to > tonumber(f[2])) then return {'!low', f[2], f[3] or '0', f[4] or '0'} end
local now = redis.call('TIME')
local at = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('HSET', KEYS[1], ${lua(COST_CAP)}, ARGV[1])
local raises = redis.call('HINCRBY', KEYS[1], ${lua(RAISES_CODE)}, 1)
redis.call('HDEL', KEYS[1], ${lua(PAUSED_CODE)})
redis.call('RPUSH', KEYS[2], '{"t":"r","at":' .. at .. ',"f":' .. f[2] .. ',"to":' .. ARGV[1] .. ',"by":' .. ARGV[2] .. '}')
local waited = redis.call('SMEMBERS', KEYS[3])
redis.call('DEL', KEYS[3])
local r = {'ok', tostring(raises), f[2], tostring(at)}
for k = 1, #waited do r[k + 4] = waited[k] end
return r
`;

// The Lua scripts of a batch's approval requests in Redis (a run parked for approval, a
// person's answer, the request closed), beside the budget's in scripts.ts, whose `!missing`
// check each runs first: a batch gone from Redis takes no request and no answer.
import { MISSING } from './scripts';

/**
 * ask: KEYS budget, approvals, events; ARGV index, request JSON (`{r, c, k}`: its id, its call
 * ids and each call's tool and input), event JSON. A run parks for approval: its request is the
 * one open for that run, and its event tells the batch's followers. A request of an earlier
 * attempt (its worker lost while the run was parked) is replaced, and an answer given to it
 * moves to the same call (id, tool and input) of the new one: the takeover waits again on that
 * call, and a person who answered while no worker held the run is not asked again (moved, not
 * copied: the earlier attempt, should it live on, cannot take it too).
 */
export const ASK = `${MISSING}
local open = redis.call('HGET', KEYS[2], ARGV[1])
if open then
  local was, now = cjson.decode(open), cjson.decode(ARGV[2])
  if was.r ~= now.r then
    for n, id in ipairs(was.c) do
      local from = ARGV[1] .. ':' .. was.r .. ':' .. id
      local answer = redis.call('HGET', KEYS[2], from)
      if answer then
        for m, to in ipairs(now.c) do
          if to == id and was.k and now.k and was.k[n] == now.k[m] then
            redis.call('HDEL', KEYS[2], from)
            redis.call('HSET', KEYS[2], ARGV[1] .. ':' .. now.r .. ':' .. id, answer)
          end
        end
      end
    end
  end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[3])
return {'ok'}
`;

/**
 * decide: KEYS budget, approvals; ARGV index, request id, call id, decision JSON. Records the
 * answer to one call of a run's open request, once: replies `{'ok', answered, calls}`, or
 * `{'!closed'}` (no such request open: the run went on or ended), `{'!unknown', ids…}` (not
 * one of its calls), `{'!answered'}` (answered already), `{'!missing'}`.
 */
export const DECIDE = `${MISSING}
local open = redis.call('HGET', KEYS[2], ARGV[1])
if not open then return {'!closed'} end
local req = cjson.decode(open)
if req.r ~= ARGV[2] then return {'!closed'} end
local known = false
for _, id in ipairs(req.c) do if id == ARGV[3] then known = true end end
if not known then
  local r = {'!unknown'}
  for _, id in ipairs(req.c) do r[#r + 1] = id end
  return r
end
local base = ARGV[1] .. ':' .. ARGV[2] .. ':'
if redis.call('HSETNX', KEYS[2], base .. ARGV[3], ARGV[4]) == 0 then return {'!answered'} end
local answered = 0
for _, id in ipairs(req.c) do answered = answered + redis.call('HEXISTS', KEYS[2], base .. id) end
return {'ok', tostring(answered), tostring(#req.c)}
`;

/**
 * unask: KEYS approvals; ARGV index, request id, then its call ids. The run went on with its
 * answers, or ended: its request closes (a late answer is refused) and its answers go. A
 * request of a later attempt is left alone.
 */
export const UNASK = `
local open = redis.call('HGET', KEYS[1], ARGV[1])
if not open or cjson.decode(open).r ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
for k = 3, #ARGV do redis.call('HDEL', KEYS[1], ARGV[1] .. ':' .. ARGV[2] .. ':' .. ARGV[k]) end
return 1
`;

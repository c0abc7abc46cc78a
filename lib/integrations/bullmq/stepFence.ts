// STEP's fence (scripts.ts), a part of its Lua text. A run's fence is the attempt that took it
// over last: a takeover, or a write-off as lost (STEP's `lost` mode raises it). A step of an
// earlier attempt is stale — that attempt's job lock expired while its worker lived on (a
// zombie). Its charge counts (the money was spent), but it lets go of nothing and reserves
// nothing: STEP answers `{'!stale', fence}` and the worker makes no further call of that attempt.
// The holds its release would let go were charged as uncertain by the takeover (the run's
// credit): its charge takes their place, the credit taken back from what is counted, so that a
// call is counted once.
import { USAGE_FIELDS } from '../../internal/usageFields';
import { CREDIT_CODE, FENCE_CODE } from './budgetFields';

/**
 * The Lua that finds whether STEP's sender is stale, ARGV[`attemptArg`] its attempt ('' or none:
 * never stale): sets `fence`, `attempt`, `fkey`, `ckey` and `stale` (false, or the reply), and
 * takes the credit back for a stale release. Runs after STEP has read `idx` and `release` and
 * defined `unhold` and `count`, before it applies the charge.
 */
export function stepFence(attemptArg: number): string {
  return `
local fkey = idx .. ':${FENCE_CODE}'
local ckey = idx .. ':${CREDIT_CODE}'
local fence = tonumber(redis.call('HGET', KEYS[2], fkey)) or 0
local attempt = tonumber(ARGV[${attemptArg}] or '')
local stale = false
if attempt ~= nil and attempt < fence then
  stale = {'!stale', tostring(fence)}
  local back = math.min(release, tonumber(redis.call('HGET', KEYS[2], ckey)) or 0)
  if back > 0 then
    unhold(KEYS[2], ckey, back)
    count('${USAGE_FIELDS.costUsd.code}', -back)
    count('${USAGE_FIELDS.uncertainUsd.code}', -back)
  end
end
`;
}

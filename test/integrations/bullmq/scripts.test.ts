import fc from 'fast-check';
import { spentLimit, type BudgetLimits } from '../../../lib/agent/BudgetLimits';
import { emptyUsage } from '../../../lib/agent/UsageTotals';
import { LIMIT_NAMES, CHARGE_FIELD_NAMES, USAGE_FIELD_NAMES } from '../../../lib/internal/fieldLists';
import { LIMITS } from '../../../lib/internal/limits';
import { USAGE_FIELDS } from '../../../lib/internal/usageFields';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import {
  CALL_CODES,
  limitFields,
  TIME_INDEX,
  USAGE_CODES,
  usageFromStrings,
} from '../../../lib/integrations/bullmq/budgetFields';
import { runScript } from '../../../lib/integrations/bullmq/redisScripts';
import { useFileRedis } from '../../helpers/redis';

const redis = useFileRedis('scripts');

/** step's arguments for reserving one LLM call with nothing to charge: run 0, no usage, no tools, no release, no hold. */
const reserveArgs = [0, ...CHARGE_FIELD_NAMES.map(() => 0), 0, 0, CALL_CODES.llm, 0];

/** Usage fields Redis keeps a counter of: all but wall time, which it tells by its clock. */
const COUNTED = USAGE_FIELD_NAMES.filter((k) => USAGE_FIELDS[k].grows !== 'time');
/** A cap on wall time is 0 (spent at once) or a day (never, within a test): the script's clock is not ours. */
const capFor = (limit: (typeof LIMIT_NAMES)[number]): fc.Arbitrary<number> =>
  LIMITS[limit].of.some((k) => USAGE_FIELDS[k].grows === 'time') ? fc.constantFrom(0, 86_400_000) : fc.nat(60);

describe('the Lua scripts', () => {
  it('reserve finds the first spent limit of every limit in the list as spentLimit does, and counts the call only while none is (property-based)', async () => {
    const counters = fc.record(
      Object.fromEntries(COUNTED.map((k) => [k, fc.nat(50)])) as Record<(typeof COUNTED)[number], fc.Arbitrary<number>>,
    );
    const caps = fc.record(
      Object.fromEntries(LIMIT_NAMES.map((k) => [k, capFor(k)])) as Record<
        (typeof LIMIT_NAMES)[number],
        fc.Arbitrary<number>
      >,
      { requiredKeys: [] },
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(counters, caps, async (count, caps: BudgetLimits) => {
        // A plain cap: a strict one (the default for a dollar cap) takes a hold with each call,
        // which the strict tests drive; this one is about finding a spent limit.
        const limits: BudgetLimits = caps.maxCostUsd === undefined ? caps : { ...caps, strict: false };
        const keys = batchKeys(redis.prefix, 'q', `b${n++}`);
        const [seconds, micros] = await redis.client.time();
        const start = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
        const hash: Record<string, number> = { ...limitFields(limits), [USAGE_CODES[TIME_INDEX]!]: start };
        for (const k of COUNTED) hash[USAGE_FIELDS[k].code] = count[k];
        await redis.client.hset(keys.budget, hash);
        const reply = (await runScript(redis.client, 'asmStep', [keys.budget, keys.runUsage], reserveArgs)) as string[];
        if (reply[0] === '') {
          expect(spentLimit({ ...emptyUsage(), ...count }, limits)).toBeUndefined();
          expect(Number(await redis.client.hget(keys.budget, CALL_CODES.llm))).toBe(count.llmCalls + 1);
        } else {
          const usage = usageFromStrings(reply.slice(1));
          expect(usage).toEqual({ ...count, wallMs: usage.wallMs });
          expect(reply[0]).toBe(spentLimit(usage, limits)?.limit);
          expect(await redis.client.hget(keys.budget, 'x')).toBe(reply[0]);
          expect(Number(await redis.client.hget(keys.budget, CALL_CODES.llm))).toBe(count.llmCalls);
        }
      }),
      { numRuns: 60 },
    );
  });
});

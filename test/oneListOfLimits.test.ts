import { Redis } from 'ioredis';
import type * as Main from '../lib/index';
import type * as History from '../lib/subpaths/history';
import type * as Internal from '../lib/subpaths/internal';
import type * as Report from '../lib/subpaths/report';
import type * as BudgetLimitsModule from '../lib/agent/BudgetLimits';
import type * as UsageTotalsModule from '../lib/agent/UsageTotals';
import type * as AiSdk from '../lib/integrations/ai-sdk/index';
import type * as BudgetFieldsModule from '../lib/integrations/bullmq/budgetFields';
import type * as BullMQ from '../lib/integrations/bullmq/index';
import type * as ScriptsModule from '../lib/integrations/bullmq/scripts';
import type * as RunRecordsModule from '../lib/integrations/bullmq/runRecords';
import type * as ScheduleBatchModule from '../lib/batch/scheduleBatch';
import { batchKeys } from '../lib/integrations/bullmq/batchKeys';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from './helpers/redis';

// Every place that charges, sums, stores, checks or shows usage is derived from two lists,
// USAGE_FIELDS and LIMITS (lib/internal). Here both lists get one entry more — a usage field
// that LLM responses report and a limit on it — in a module registry of their own, and every
// place must pick them up with no other change: a place that spells the fields out by hand
// fails here. (Not yet here: the adapter's turn, lib/agent/adapter/TurnRunner.ts, which charges a
// response's tokens and cost by name until it charges `responseUsage` — it is being split.)

const USAGE_FIELDS_PATH = '../lib/internal/usageFields';
const LIMITS_PATH = '../lib/internal/limits';

/**
 * The added usage field and limit: issue 22's example. `cachedInputTokens` is already a field of
 * `Usage` that the SDK adapters fill in, but not yet one of `UsageTotals`.
 */
const FIELD = 'cachedInputTokens';
const LIMIT = 'maxCachedTokens';

/** The main entry with the subpaths used here, as one module. */
type Lib = typeof Main & typeof History & typeof Internal & typeof Report;

interface Loaded {
  lib: Lib;
  limits: typeof BudgetLimitsModule;
  totals: typeof UsageTotalsModule;
  aiSdk: typeof AiSdk;
  bullmq: typeof BullMQ;
  budgetFields: typeof BudgetFieldsModule;
  scripts: typeof ScriptsModule;
  runRecords: typeof RunRecordsModule;
  /** runBatch's body: runBatch loads it at its first call, which is after the sandbox, with the real lists. */
  scheduleBatch: typeof ScheduleBatchModule.scheduleBatch;
}

/** The library, loaded afresh with the longer lists. */
function loadWithOneMore(): Loaded {
  let loaded: Loaded | undefined;
  jest.isolateModules(() => {
    jest.doMock(USAGE_FIELDS_PATH, () => {
      const real = jest.requireActual<Record<string, unknown>>(USAGE_FIELDS_PATH);
      return {
        ...real,
        USAGE_FIELDS: { ...(real.USAGE_FIELDS as object), [FIELD]: { grows: 'response', code: 'ci' } },
      };
    });
    jest.doMock(LIMITS_PATH, () => {
      const real = jest.requireActual<Record<string, unknown>>(LIMITS_PATH);
      const limit = {
        of: [FIELD],
        code: 'mct',
        label: 'cached tokens',
        against: (used: number, max: number) => `${used} cached of ${max}`,
        cell: (n: number) => `${n} cached`,
      };
      return { ...real, LIMITS: { ...(real.LIMITS as object), [LIMIT]: limit } };
    });
    /* eslint-disable @typescript-eslint/no-require-imports -- inside isolateModules: an import would be hoisted out of the sandbox and get the real lists */
    loaded = {
      lib: {
        ...(require('../lib/index') as typeof Main),
        ...(require('../lib/subpaths/history') as typeof History),
        ...(require('../lib/subpaths/internal') as typeof Internal),
        ...(require('../lib/subpaths/report') as typeof Report),
      },
      limits: require('../lib/agent/BudgetLimits') as typeof BudgetLimitsModule,
      totals: require('../lib/agent/UsageTotals') as typeof UsageTotalsModule,
      aiSdk: require('../lib/integrations/ai-sdk/index') as typeof AiSdk,
      bullmq: require('../lib/integrations/bullmq/index') as typeof BullMQ,
      budgetFields: require('../lib/integrations/bullmq/budgetFields') as typeof BudgetFieldsModule,
      scripts: require('../lib/integrations/bullmq/scripts') as typeof ScriptsModule,
      runRecords: require('../lib/integrations/bullmq/runRecords') as typeof RunRecordsModule,
      scheduleBatch: (require('../lib/batch/scheduleBatch') as typeof ScheduleBatchModule).scheduleBatch,
    };
    /* eslint-enable @typescript-eslint/no-require-imports */
    // Mocks are kept by the test file, not by the sandbox: nothing loaded later gets the longer lists.
    jest.dontMock(USAGE_FIELDS_PATH);
    jest.dontMock(LIMITS_PATH);
  });
  return loaded!;
}

/** Loose access to the added field and limit, which the types do not know. */
type Loose = Record<string, unknown>;
const limitsWith = (max: number): Main.BudgetLimits => ({ [LIMIT]: max }) as Main.BudgetLimits;
const deltaOf = (n: number): Main.UsageDelta => ({ [FIELD]: n }) as Main.UsageDelta;

let m: Loaded;
beforeAll(() => {
  m = loadWithOneMore();
});

describe('a usage field and a limit added to the lists', () => {
  it('is a limit assertBudgetLimits accepts, and still names bad values', () => {
    expect(() => m.lib.assertBudgetLimits(limitsWith(5), 'total')).not.toThrow();
    expect(() => m.lib.assertBudgetLimits(limitsWith(-1), 'total')).toThrow(
      `Expected \`total.${LIMIT}\` to be a non-negative finite number, got \`-1\` (number)`,
    );
    expect(() => m.lib.assertBudgetLimits({ maxCost: 1 }, 'total')).toThrow(
      `one of the limits maxCostUsd, maxTokens, maxToolCalls, maxLlmCalls, maxWallMs, ${LIMIT} (unknown key)`,
    );
  });

  it('is in the usage totals: emptyUsage, addUsage, addUsageTo', () => {
    expect(m.lib.emptyUsage()).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      uncertainUsd: 0,
      releasedUsd: 0,
      unpricedCalls: 0,
      toolCalls: 0,
      llmCalls: 0,
      wallMs: 0,
      [FIELD]: 0,
    });
    expect(
      (m.lib.addUsage(m.lib.addUsage(m.lib.emptyUsage(), deltaOf(2)), deltaOf(3)) as unknown as Loose)[FIELD],
    ).toBe(5);
    const inPlace = m.lib.emptyUsage();
    m.totals.addUsageTo(inPlace, deltaOf(4));
    expect((inPlace as unknown as Loose)[FIELD]).toBe(4);
  });

  it('is charged and checked by Budget, and worded by spentLimit', () => {
    const budget = new m.lib.Budget(limitsWith(10), { label: 'shared budget' });
    budget.charge(deltaOf(6));
    expect(budget.spent()).toBeUndefined();
    expect(() => budget.charge(deltaOf(Number.NaN))).toThrow(`delta.${FIELD}`);
    budget.charge(deltaOf(4));
    expect((budget.usage as unknown as Loose)[FIELD]).toBe(10);
    const spent = {
      limit: LIMIT,
      used: 10,
      max: 10,
      message: 'shared budget exceeded: 10 cached of 10 after 0 LLM calls',
    };
    expect(budget.spent()).toEqual(spent);
    expect(m.limits.spentLimit(budget.usage, limitsWith(10), 'shared budget')).toEqual(spent);
  });

  it('stops runBatch when the batch total is spent', async () => {
    const agent = (): Main.AgentLoop => m.lib.createScriptedAgent({ replies: [{ text: 'done' }] });
    const report = await m.scheduleBatch([{ id: 'a', input: 'go', agent }], { total: limitsWith(0), logger: false });
    expect(report.runs[0]!.outcome).toBe('skipped');
    expect(report.stopped?.message).toBe("the batch's total budget exceeded: 0 cached of 0 after 0 LLM calls");
    expect(report.totals).toHaveProperty(FIELD, 0);
  });

  it('has a row in the batch report and in the HTML page, with its caps', () => {
    const usage = { ...m.lib.emptyUsage(), [FIELD]: 30 } as Main.UsageTotals;
    const report: Main.BatchReport = {
      runs: [{ id: 'a', outcome: 'end_of_turn', usage, durationMs: 10, transitions: 4 }],
      totals: {
        ...usage,
        outcomes: { end_of_turn: 1, wrapped_up: 0, budget_exceeded: 0, stalled: 0, error: 0, cancelled: 0, skipped: 0 },
      },
      limits: { total: limitsWith(60), perRun: limitsWith(40) },
      concurrency: 1,
      durationMs: 10,
    };
    expect(m.lib.formatBatchReport(report)).toMatch(/\n {2}cached tokens +30 cached +60 cached \(50%\) +40 cached\n/);
    const page = m.lib.renderBatchPage([{ report: report.runs[0]! }], { limits: report.limits });
    expect(page).toContain('<td>cached tokens</td><td class="num">30 cached</td><td class="num">60 cached (50%)</td>');
  });

  it('is read back from the caps runBatch writes into a history', () => {
    const meta = {
      type: 'meta',
      version: '0',
      runId: 'x',
      startedAt: 0,
      table: { initial: 'Ready', states: [], edges: [], terminal: [], error: [] },
      metadata: { batch: { limits: { total: limitsWith(7) } } },
    };
    const history = [{ kind: 'meta', line: 1, meta, table: m.lib.DEFAULT_TABLE }] as unknown as History.HistoryItem[];
    expect(m.lib.renderBatchPage([{ history }])).toContain(
      '<td>cached tokens</td><td class="num">0 cached</td><td class="num">7 cached (0%)</td>',
    );
  });

  it('is charged by budgetFor from what an AI SDK step reports', async () => {
    const budget = new m.lib.Budget({});
    const guard = m.aiSdk.budgetFor(budget);
    const step = {
      usage: { inputTokens: 10, outputTokens: 5, inputTokenDetails: { cacheReadTokens: 7 } },
      content: [],
      response: { modelId: 'm' },
    };
    try {
      await guard.stopWhen({ steps: [step] } as never);
    } finally {
      guard.dispose();
    }
    expect(budget.usage).toMatchObject({ inputTokens: 10, outputTokens: 5, [FIELD]: 7 });
  });
});

describe('a usage field and a limit added to the lists, in a distributed batch', () => {
  let url: string;
  let prefix: string;
  let client: Redis;
  beforeAll(async () => {
    url = await testRedisUrl();
    prefix = uniquePrefix('lists');
    client = new Redis(url);
  });
  afterAll(async () => {
    client.disconnect();
    await deletePrefix(url, prefix);
    await releaseRedis();
  });

  it('has its counter and its cap in the Lua scripts', () => {
    expect(m.scripts.RESERVE).toContain(
      `redis.call('HMGET', KEYS[1], 'i', 'o', 'c', 'cu', 'cr', 'cn', 't', 'l', 'st', 'ci', 'mc', 'mt', 'mtc', 'mlc', 'mw', 'mct', 'wp')`,
    );
    expect(m.scripts.RESERVE).toContain(`elseif over(n[10], tonumber(b[16])) then spent = '${LIMIT}'`);
    expect(m.scripts.CHARGE).toContain(`add[#add + 1] = {'ci', ARGV[8], false}`);
  });

  it('is charged and checked in Redis by RedisBudget, worded as in one process', async () => {
    const keys = batchKeys(prefix, 'q', 'charge');
    await client.hset(keys.budget, { st: Date.now(), ...m.budgetFields.limitFields(limitsWith(9)) });
    expect(await client.hget(keys.budget, 'mct')).toBe('9');
    const budget = new m.bullmq.RedisBudget(client, keys, limitsWith(9), 3);
    expect(await budget.charge(deltaOf(5))).toBeUndefined();
    expect(await budget.charge(deltaOf(4))).toEqual({
      limit: LIMIT,
      used: 9,
      max: 9,
      message: 'shared budget exceeded: 9 cached of 9 after 0 LLM calls',
    });
    expect(await budget.reserve('llm')).toMatchObject({ limit: LIMIT });
    expect(await client.hget(keys.runUsage, '3:ci')).toBe('9');
    // A run lost with its worker is reported with what it had charged.
    const lost = await m.runRecords.lostReport(client, keys, 3, 'r3', { w: 'w1', a: 1 });
    expect(lost.usage).toHaveProperty(FIELD, 9);
  });

  it('is a cap submitBatch writes into the batch budget', async () => {
    const batch = await m.bullmq.submitBatch([], {
      connection: url,
      name: 'q',
      prefix,
      total: limitsWith(11),
      keepKeys: true,
    });
    const report = await batch.report();
    expect(await client.hget(batchKeys(prefix, 'q', batch.batchId).budget, 'mct')).toBe('11');
    expect(report.budget).toHaveProperty(FIELD, 0);
  });
});

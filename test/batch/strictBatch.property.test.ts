import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { createScriptedAgent, runBatch, type BatchReport, type Pricing, type ScriptedReply } from '../../lib/index';

// Random batches in process under a strict dollar cap: random replies (usage anywhere up to the
// request's bound, failed attempts), random bounds, concurrency, caps and floors. Every
// operation resolves in its own event-loop turn, so runs interleave in many orders.
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = async (ms: number): Promise<void> => {
  for (let i = 0; i < ms; i++) await tick();
};

// $2 per million input tokens, $8 per million output tokens.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 2e-6 + (u.outputTokens ?? 0) * 8e-6;

interface ReplySpec {
  kind: 'tool' | 'text' | 'fail';
  /** Shares of the bound the response uses: 0 to 1. */
  inShare: number;
  outShare: number;
  latency: number;
}
interface TaskSpec {
  inputTokens: number;
  maxOutputTokens: number;
  replies: ReplySpec[];
}

const replyArb = (kind: fc.Arbitrary<ReplySpec['kind']>): fc.Arbitrary<ReplySpec> =>
  fc.record({
    kind,
    inShare: fc.double({ min: 0, max: 1, noNaN: true }),
    outShare: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
    latency: fc.integer({ min: 0, max: 4 }),
  });
const taskArb: fc.Arbitrary<TaskSpec> = fc.record({
  inputTokens: fc.integer({ min: 0, max: 5000 }),
  maxOutputTokens: fc.integer({ min: 1, max: 4000 }),
  replies: fc
    .tuple(
      fc.array(replyArb(fc.constantFrom<'tool' | 'fail'>('tool', 'tool', 'fail')), { maxLength: 5 }),
      replyArb(fc.constant<'text'>('text')),
    )
    .map(([rounds, last]) => [...rounds, last]),
});

function agentOf(spec: TaskSpec) {
  const bound = { inputTokens: spec.inputTokens, maxOutputTokens: spec.maxOutputTokens, model: 'm' };
  const replies: ScriptedReply[] = spec.replies.map((r) => {
    if (r.kind === 'fail') return { error: 'transient failure', delayMs: r.latency };
    const usage = {
      inputTokens: Math.floor(r.inShare * spec.inputTokens),
      outputTokens: Math.floor(r.outShare * spec.maxOutputTokens),
    };
    return r.kind === 'text'
      ? { text: 'done', usage, model: 'm', delayMs: r.latency }
      : { toolCalls: [{ id: 'c1', name: 'bash' }], usage, model: 'm', delayMs: r.latency };
  });
  return () => createScriptedAgent({ replies, bound, sleep, tools: { bash: { output: 'ok' } } });
}

const batchArb = fc.record({
  tasks: fc.array(taskArb, { minLength: 1, maxLength: 12 }),
  concurrency: fc.integer({ min: 1, max: 6 }),
  totalCap: fc.double({ min: 0, max: 0.3, noNaN: true }),
  perRunCap: fc.option(fc.double({ min: 0, max: 0.1, noNaN: true }), { nil: undefined }),
  floor: fc.integer({ min: 1, max: 2000 }),
});

type Batch = typeof batchArb extends fc.Arbitrary<infer T> ? T : never;

function run(b: Batch, strict: boolean, extra: Parameters<typeof runBatch>[1] = {}): Promise<BatchReport> {
  return runBatch(
    b.tasks.map((t, i) => ({ id: `t${i}`, input: 'go', agent: agentOf(t) })),
    {
      concurrency: b.concurrency,
      pricing,
      logger: false,
      sleep: async () => tick(),
      retry: { retries: 1, baseDelayMs: 0, shouldRetry: () => true },
      minOutputTokens: b.floor,
      total: { maxCostUsd: b.totalCap, ...(strict ? { strict: true } : {}) },
      ...(b.perRunCap === undefined
        ? {}
        : { perRun: { maxCostUsd: b.perRunCap, ...(strict ? { strict: true } : {}) } }),
      ...extra,
    },
  );
}

describe('runBatch under a strict maxCostUsd (property-based)', () => {
  it('never lets spend pass the total cap nor a run pass its perRun cap, whatever the replies and interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(batchArb, async (b) => {
        const report = await run(b, true);
        expect(report.totals.costUsd).toBeLessThanOrEqual(b.totalCap);
        if (b.perRunCap !== undefined)
          for (const r of report.runs) expect(r.usage.costUsd).toBeLessThanOrEqual(b.perRunCap);
        // Every task is accounted for, and nothing failed for want of a bound or a price.
        expect(report.runs).toHaveLength(b.tasks.length);
        for (const r of report.runs)
          if (r.outcome === 'error')
            expect(r.error?.message).toMatch(/^sendUserMessage failed after|^sendToolResults failed after/);
      }),
      { numRuns: 150 },
    );
  });

  it('the money ledger changes nothing but the files: the same batch reports the same with and without it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-strict-ledger-'));
    try {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(batchArb, fc.boolean(), async (b, strict) => {
          // One run at a time: the interleaving (and so which run meets the cap first) is the same in both.
          const serial = { ...b, concurrency: 1 };
          const plain = await run(serial, strict);
          const ledgered = await run(serial, strict, { historyDir: path.join(dir, `b${n++}`), ledger: true });
          const strip = (r: BatchReport) => r.runs.map((x) => [x.outcome, x.usage.costUsd, x.usage.llmCalls]);
          expect(strip(ledgered)).toEqual(strip(plain));
        }),
        { numRuns: 40 },
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

import fc from 'fast-check';
import { createScriptedAgent, runBatch, type BatchPause, type Pricing, type ScriptedReply } from '../../lib/index';

// Random batches under a pausing strict cap (total.whenSpent: 'pause'), raised at random
// moments by random amounts: spend never passes the cap in force at any moment, and every task
// is reported once. Every operation resolves in its own event-loop turn, so runs interleave.
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = async (ms: number): Promise<void> => {
  for (let i = 0; i < ms; i++) await tick();
};

// $2 per million input tokens, $8 per million output tokens.
const pricing: Pricing = (u) => (u.inputTokens ?? 0) * 2e-6 + (u.outputTokens ?? 0) * 8e-6;

const replyArb = fc.record({
  tool: fc.boolean(),
  // Often the whole bound: a call then costs its hold, and any slack in the cap would show.
  inShare: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
  outShare: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
  latency: fc.integer({ min: 0, max: 3 }),
});
const taskArb = fc.record({
  inputTokens: fc.integer({ min: 0, max: 3000 }),
  maxOutputTokens: fc.integer({ min: 1, max: 3000 }),
  replies: fc.array(replyArb, { minLength: 1, maxLength: 4 }),
});
type TaskSpec = typeof taskArb extends fc.Arbitrary<infer T> ? T : never;

function agentOf(spec: TaskSpec) {
  const bound = { inputTokens: spec.inputTokens, maxOutputTokens: spec.maxOutputTokens, model: 'm' };
  const replies: ScriptedReply[] = spec.replies.map((r, i) => {
    const usage = {
      inputTokens: Math.floor(r.inShare * spec.inputTokens),
      outputTokens: Math.floor(r.outShare * spec.maxOutputTokens),
    };
    const last = i === spec.replies.length - 1;
    return !last && r.tool
      ? { toolCalls: [{ id: `c${i}`, name: 'work' }], usage, model: 'm', delayMs: r.latency }
      : { text: 'done', usage, model: 'm', delayMs: r.latency };
  });
  // Replies after a text answer are never asked for; a run ends at its first text.
  return () => createScriptedAgent({ replies, bound, sleep, tools: { work: { output: 'ok' } } });
}

const batchArb = fc.record({
  tasks: fc.array(taskArb, { minLength: 1, maxLength: 10 }),
  concurrency: fc.integer({ min: 1, max: 5 }),
  cap: fc.double({ min: 0, max: 0.05, noNaN: true }),
  floor: fc.integer({ min: 1, max: 2000 }),
  // Each raise's step, in turn (cycled), and whether a progress event raises too.
  steps: fc.array(fc.double({ min: 0.0005, max: 0.03, noNaN: true }), { minLength: 1, maxLength: 5 }),
  raiseOnProgress: fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
});

describe('runBatch under a pausing strict cap (property-based)', () => {
  it('spend never passes the cap in force at any moment, whatever the raises; every task is reported once', async () => {
    await fc.assert(
      fc.asyncProperty(batchArb, async (b) => {
        let cap = b.cap;
        let handle: BatchPause | undefined;
        let raises = 0;
        let events = 0;
        let worst = 0;
        let spent = 0;
        const raise = (): void => {
          const to = cap + b.steps[raises % b.steps.length]!;
          raises += 1;
          // The cap in force changes once raise returns; spend checked against the old one until then.
          handle!.raise({ maxCostUsd: to });
          cap = to;
        };
        const report = await runBatch(
          b.tasks.map((t, i) => ({ id: `t${i}`, input: 'go', agent: agentOf(t) })),
          {
            concurrency: b.concurrency,
            pricing,
            logger: false,
            sleep: async () => tick(),
            minOutputTokens: b.floor,
            total: { maxCostUsd: b.cap, whenSpent: 'pause' },
            onPause: (pause) => {
              handle = pause;
              expect(pause.capUsd).toBe(cap);
              // Now or a few turns later: runs in flight go on meanwhile.
              void sleep(raises % 3).then(raise);
            },
            // Every response, as it is charged: the spend so far against the cap in force then.
            onRun: ({ agent }) => {
              agent.on('llmAttempt', (e) => {
                spent += e.usage?.costUsd ?? 0;
                worst = Math.max(worst, spent - cap);
              });
            },
            onProgress: (p) => {
              worst = Math.max(worst, p.usage.costUsd - cap);
              expect(p.running).toBeLessThanOrEqual(b.concurrency);
              if (handle !== undefined && b.raiseOnProgress[events++ % b.raiseOnProgress.length]) raise();
            },
          },
        );
        expect(worst).toBeLessThanOrEqual(1e-12);
        expect(report.totals.costUsd).toBeLessThanOrEqual(cap + 1e-12);
        expect(report.runs).toHaveLength(b.tasks.length);
        expect(report.runs.map((r) => r.id)).toEqual(b.tasks.map((_, i) => `t${i}`));
        for (const r of report.runs) expect(r.outcome).toBe('end_of_turn');
        expect(report.raises).toHaveLength(raises);
        expect(report.raises!.map((r) => r.toUsd).at(-1) ?? b.cap).toBe(cap);
      }),
      { numRuns: 120, timeout: 5000 },
    );
  }, 120_000);
});

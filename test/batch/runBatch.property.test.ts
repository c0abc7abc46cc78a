import fc from 'fast-check';
import {
  createScriptedAgent,
  runBatch,
  type AgentLoop,
  type BatchProgress,
  type BatchTask,
  type LLMResponse,
  type ScriptedReply,
} from '../../lib/index';

// Every operation resolves in its own event-loop turn (setImmediate), so runs interleave in
// many orders and no real time passes. Node drains microtasks after each setImmediate
// callback, so when an LLM response resolves, the adapter has charged it to the shared
// budget before any other run does anything: the ledger below sees what the budget sees.
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const ticks = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await tick();
};

interface ReplySpec {
  kind: 'tool' | 'text' | 'fail';
  cents: number;
  latency: number;
}
interface TaskSpec {
  replies: ReplySpec[];
  toolLatency: number;
}

const replyArb = (kind: fc.Arbitrary<'tool' | 'fail'>): fc.Arbitrary<ReplySpec> =>
  fc.record({ kind, cents: fc.integer({ min: 0, max: 20 }), latency: fc.integer({ min: 1, max: 4 }) });
const taskArb: fc.Arbitrary<TaskSpec> = fc.record({
  replies: fc
    .tuple(
      fc.array(replyArb(fc.constantFrom<'tool' | 'fail'>('tool', 'tool', 'tool', 'fail')), { maxLength: 5 }),
      replyArb(fc.constant('text' as never)).map((r) => ({ ...r, kind: 'text' as const })),
    )
    .map(([rounds, last]) => [...rounds, last]),
  toolLatency: fc.integer({ min: 1, max: 3 }),
});
const capArb = fc.record({
  cents: fc.integer({ min: 0, max: 400 }),
  maxLlmCalls: fc.option(fc.integer({ min: 0, max: 80 }), { nil: undefined }),
});
const perRunArb = fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined });

function toReply(r: ReplySpec): ScriptedReply {
  if (r.kind === 'fail') return { error: 'transient LLM failure', delayMs: r.latency };
  const usage = { costUsd: r.cents / 100, inputTokens: 100, outputTokens: 10 };
  return r.kind === 'text'
    ? { text: 'done', usage, delayMs: r.latency }
    : { toolCalls: [{ id: 'c1', name: 'bash' }], usage, delayMs: r.latency };
}

/** What the agents saw, across the whole batch. */
interface Ledger {
  /** Cost of the responses returned so far, in cents. */
  cents: number;
  llmCallsStarted: number;
  /** LLM calls started when the shared budget was already spent: must stay 0. */
  lateStarts: string[];
  pendingOps: number;
  maxPendingOps: number;
}

/** Wraps an agent so every operation is counted and every LLM call start is checked against the cap. */
function instrument(
  agent: AgentLoop,
  ledger: Ledger,
  cap: { cents: number; maxLlmCalls: number | undefined },
  id: string,
): AgentLoop {
  const track = async <T>(op: () => Promise<T>): Promise<T> => {
    ledger.pendingOps += 1;
    ledger.maxPendingOps = Math.max(ledger.maxPendingOps, ledger.pendingOps);
    try {
      return await op();
    } finally {
      ledger.pendingOps -= 1;
    }
  };
  const llm = async (op: () => Promise<LLMResponse>): Promise<LLMResponse> => {
    if (ledger.cents >= cap.cents)
      ledger.lateStarts.push(`${id}: LLM call started at ${ledger.cents}¢ of ${cap.cents}¢`);
    if (cap.maxLlmCalls !== undefined && ledger.llmCallsStarted >= cap.maxLlmCalls)
      ledger.lateStarts.push(`${id}: LLM call ${ledger.llmCallsStarted + 1} of ${cap.maxLlmCalls}`);
    ledger.llmCallsStarted += 1;
    const response = await track(op);
    ledger.cents += Math.round((response.usage?.costUsd ?? 0) * 100);
    return response;
  };
  return {
    sendUserMessage: (message, ctx) => llm(() => agent.sendUserMessage(message, ctx)),
    sendToolResults: (results, messages, ctx) => llm(() => agent.sendToolResults(results, messages, ctx)),
    runTool: (call, ctx) => track(() => agent.runTool(call, ctx)),
  };
}

/** The worst overshoot seen, in responses per run in flight (≤ 1 is the guarantee). Printed with BATCH_STATS=1. */
const stats = { batches: 0, capped: 0, worstOvershootCents: 0, worstRatio: 0, worstAt: '' };
afterAll(() => {
  if (process.env.BATCH_STATS === '1') console.log(JSON.stringify(stats));
});

describe('runBatch with random tasks, caps and concurrency (property-based)', () => {
  it('never starts an LLM call on a spent shared budget, overspends by at most one response per run in flight, and accounts for every task', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 16 }),
        fc.array(taskArb, { minLength: 1, maxLength: 40 }),
        capArb,
        perRunArb,
        async (concurrency, specs, cap, perRunCents) => {
          const ledger: Ledger = { cents: 0, llmCallsStarted: 0, lateStarts: [], pendingOps: 0, maxPendingOps: 0 };
          const factoryCalls = specs.map(() => 0);
          let alive = 0;
          let maxAlive = 0;
          const tasks = specs.map((spec, i): BatchTask => ({
            id: `task-${i}`,
            input: `task ${i}`,
            agent: () => {
              factoryCalls[i]! += 1;
              maxAlive = Math.max(maxAlive, ++alive);
              const agent = createScriptedAgent({
                sleep: (n) => ticks(n),
                replies: spec.replies.map(toReply),
                tools: { bash: { output: 'ok', delayMs: spec.toolLatency } },
              });
              return instrument(agent, ledger, cap, `task-${i}`);
            },
          }));
          const progress: BatchProgress[] = [];
          const report = await runBatch(tasks, {
            concurrency,
            total: {
              maxCostUsd: cap.cents / 100,
              strict: false,
              ...(cap.maxLlmCalls === undefined ? {} : { maxLlmCalls: cap.maxLlmCalls }),
            },
            ...(perRunCents === undefined ? {} : { perRun: { maxCostUsd: perRunCents / 100, strict: false } }),
            retry: { retries: 1, baseDelayMs: 1 },
            sleep: () => tick(),
            logger: false,
            clock: () => 0,
            onProgress: (p) => {
              progress.push(p);
              if (p.event.type === 'finished') alive -= 1;
            },
          });

          // The tight guarantee: every LLM call started while the shared budget had room.
          expect(ledger.lateStarts).toEqual([]);
          // Hence the bound: past the cap, at most one response per run in flight.
          const maxReplyCents = Math.max(0, ...specs.flatMap((s) => s.replies.map((r) => r.cents)));
          const totalCents = Math.round(report.totals.costUsd * 100);
          expect(totalCents).toBe(ledger.cents);
          expect(totalCents).toBeLessThanOrEqual(cap.cents + Math.min(concurrency, specs.length) * maxReplyCents);
          if (cap.maxLlmCalls !== undefined) expect(report.totals.llmCalls).toBeLessThanOrEqual(cap.maxLlmCalls);
          const spent =
            totalCents >= cap.cents || (cap.maxLlmCalls !== undefined && report.totals.llmCalls >= cap.maxLlmCalls);

          // Concurrency, as the agents saw it and as progress reported it.
          expect(maxAlive).toBeLessThanOrEqual(concurrency);
          expect(ledger.maxPendingOps).toBeLessThanOrEqual(concurrency);
          expect(Math.max(...progress.map((p) => p.running))).toBeLessThanOrEqual(concurrency);

          // Every task is accounted for, in order; outcome counts add up.
          expect(report.runs.map((r) => r.id)).toEqual(tasks.map((t) => t.id));
          const { outcomes } = report.totals;
          expect(
            outcomes.end_of_turn + outcomes.budget_exceeded + outcomes.error + outcomes.cancelled + outcomes.skipped,
          ).toBe(specs.length);
          expect(outcomes.cancelled).toBe(0);
          expect(progress.at(-1)!.done).toBe(specs.length);

          // Skipped runs: never started, zero usage, the tail of the list, and only once the pool was spent.
          const firstSkipped = report.runs.findIndex((r) => r.outcome === 'skipped');
          report.runs.forEach((run, i) => {
            if (run.outcome === 'skipped') {
              expect(factoryCalls[i]).toBe(0);
              expect(run.usage).toEqual({
                inputTokens: 0,
                outputTokens: 0,
                costUsd: 0,
                toolCalls: 0,
                llmCalls: 0,
                wallMs: 0,
                uncertainUsd: 0,
                releasedUsd: 0,
                unpricedCalls: 0,
              });
              expect(run.transitions).toBe(0);
              expect(run.error!.message).toMatch(/^the batch's total budget exceeded: /);
            } else {
              expect(factoryCalls[i]).toBe(1);
              expect(run.transitions).toBeGreaterThan(0);
              if (firstSkipped !== -1) expect(i).toBeLessThan(firstSkipped);
            }
            if (run.outcome === 'budget_exceeded') {
              expect(run.error!.message).toMatch(
                perRunCents === undefined
                  ? /^the batch's total budget exceeded: /
                  : /^(the batch's total )?budget exceeded: /,
              );
              if (/^the batch's/.test(run.error!.message)) expect(spent).toBe(true);
            }
          });
          if (outcomes.skipped > 0) expect(spent).toBe(true);
          if (!spent) expect(report.runs.filter((r) => /^shared/.test(r.error?.message ?? ''))).toEqual([]);

          stats.batches += 1;
          if (spent && maxReplyCents > 0) {
            stats.capped += 1;
            const over = totalCents - cap.cents;
            const ratio = over / (Math.min(concurrency, specs.length) * maxReplyCents);
            if (over > stats.worstOvershootCents) stats.worstOvershootCents = over;
            if (ratio > stats.worstRatio) {
              stats.worstRatio = ratio;
              stats.worstAt = `concurrency ${concurrency}, ${specs.length} tasks, cap ${cap.cents}¢, spent ${totalCents}¢, largest reply ${maxReplyCents}¢`;
            }
          }
        },
      ),
      { numRuns: Number(process.env.BATCH_RUNS ?? 150) },
    );
  }, 600_000);

  it('aborted at a random point: resolves, starts nothing after the abort, and accounts for every task', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.array(taskArb, { minLength: 1, maxLength: 25 }),
        fc.nat(40),
        async (concurrency, specs, abortAfterCalls) => {
          const controller = new AbortController();
          const ledger: Ledger = { cents: 0, llmCallsStarted: 0, lateStarts: [], pendingOps: 0, maxPendingOps: 0 };
          const startedAfterAbort: number[] = [];
          const tasks = specs.map((spec, i): BatchTask => ({
            id: `task-${i}`,
            input: 'go',
            agent: () => {
              if (controller.signal.aborted) startedAfterAbort.push(i);
              const agent = createScriptedAgent({
                sleep: (n) => ticks(n),
                replies: spec.replies.map(toReply),
                tools: { bash: { output: 'ok', delayMs: spec.toolLatency } },
              });
              const wrapped = instrument(agent, ledger, { cents: Infinity, maxLlmCalls: undefined }, `task-${i}`);
              const send = wrapped.sendUserMessage;
              return {
                ...wrapped,
                sendUserMessage: (message, ctx) => {
                  if (ledger.llmCallsStarted === abortAfterCalls) controller.abort('stop');
                  return send(message, ctx);
                },
              };
            },
          }));
          const report = await runBatch(tasks, {
            concurrency,
            signal: controller.signal,
            retry: { retries: 1, baseDelayMs: 1 },
            sleep: () => tick(),
            logger: false,
            clock: () => 0,
          });
          expect(startedAfterAbort).toEqual([]);
          const { outcomes } = report.totals;
          expect(
            outcomes.end_of_turn + outcomes.budget_exceeded + outcomes.error + outcomes.cancelled + outcomes.skipped,
          ).toBe(specs.length);
          for (const run of report.runs) {
            if (run.outcome === 'skipped') expect(run.error!.message).toBe('batch aborted: stop');
            if (run.outcome === 'cancelled') expect(controller.signal.aborted).toBe(true);
          }
          if (outcomes.skipped > 0)
            expect(report.stopped).toEqual({ reason: 'aborted', message: 'batch aborted: stop' });
        },
      ),
      { numRuns: 100 },
    );
  });
});

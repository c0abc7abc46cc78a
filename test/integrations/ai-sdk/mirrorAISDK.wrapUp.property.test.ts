import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { generateText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import fc from 'fast-check';
import { z } from 'zod';
import { runBatch, type FrameworkTask, type Pricing } from 'agent-state-machine';
import { DEFAULT_WRAP_UP_INSTRUCTION } from '../../../lib/agent/BudgetEndings';
import { mirrorAISDK } from '../../../lib/integrations/ai-sdk';
import { apiError, checkPrompt } from './scriptedModel';

// runBatch of mirrorAISDK tasks under a strict total with wrapUp, over random scripts: each
// model call answers after a seeded number of microtask turns (so the runs' calls interleave in
// every order), fails with a 429 the SDK retries (an ordinary call), or asks for one or two tool calls, with any
// output up to its max and results of any length; a call that may use no tool answers. The max
// output tokens run from 16 (where a round's message structure outweighs the response it carries)
// to 1,000. No run's final call may lose the room its reserve kept to another run, nor outgrow it:
// every run that called ends with its answer.

/** $5 per million tokens, in or out. */
const USD_PER_TOKEN = 5e-6;
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * USD_PER_TOKEN;
const MAX_OUTPUT = 1000;

type Move = { kind: 'calls'; n: 1 | 2; output: number; result: number; ticks: number } | { kind: '429'; ticks: number };

const moveArb: fc.Arbitrary<Move> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('calls' as const),
      n: fc.constantFrom(1 as const, 2 as const),
      output: fc.integer({ min: 0, max: MAX_OUTPUT }),
      result: fc.oneof(fc.nat(40), fc.nat(4000)),
      ticks: fc.nat(8),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('429' as const), ticks: fc.nat(8) }) },
);

const ticks = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

/** What the model was billed (the usage it reported, priced), and the requests it got. */
interface Ledger {
  billedUsd: number;
  requests: Map<string, LanguageModelV3CallOptions[]>;
}

/**
 * A model that would call tools for ever, playing `moves` in a loop (each tool call asks for a
 * result of the move's length; the output it reports is the move's, at most `maxOutput`); a final
 * call (toolChoice none) answers.
 */
function endlessModel(id: string, moves: Move[], maxOutput: number, ledger: Ledger): MockLanguageModelV3 {
  let i = 0;
  let failedLast = false;
  const seen: LanguageModelV3CallOptions[] = [];
  ledger.requests.set(id, seen);
  return new MockLanguageModelV3({
    modelId: 'm',
    doGenerate: async (options): Promise<LanguageModelV3GenerateResult> => {
      seen.push(options);
      checkPrompt(options.prompt);
      const move = moves[i++ % moves.length]!;
      await ticks(move.ticks);
      const final = options.toolChoice?.type === 'none';
      // Ordinary calls only: a failed final call is charged at its hold (it may have been
      // billed), and the cap keeps no room to make it again; the run then ends budget_exceeded.
      // Never twice in a row, so that the SDK's retries (2) always get through.
      if (move.kind === '429' && !final && !failedLast) {
        failedLast = true;
        throw apiError(429, { 'retry-after-ms': '0' });
      }
      failedLast = false;
      // The input a tokenizer would count: about 4 characters a token of what was sent.
      const input = Math.ceil(JSON.stringify({ prompt: options.prompt, tools: options.tools }).length / 4);
      const output = Math.min(maxOutput, move.kind === '429' ? 0 : final ? Math.min(20, move.output) : move.output);
      ledger.billedUsd += (input + output) * USD_PER_TOKEN;
      const content = final
        ? [{ type: 'text' as const, text: `answer of ${id}` }]
        : Array.from({ length: move.kind === 'calls' ? move.n : 1 }, (_, k) => ({
            type: 'tool-call' as const,
            toolCallId: `${id}-${i}-${k}`,
            toolName: 'look',
            input: JSON.stringify({ length: move.kind === 'calls' ? move.result : 0 }),
          }));
      return {
        content,
        finishReason: final ? { unified: 'stop', raw: 'stop' } : { unified: 'tool-calls', raw: 'tool_calls' },
        usage: {
          inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: output, text: output, reasoning: undefined },
        },
        warnings: [],
        response: { modelId: 'm' },
      };
    },
  });
}

const look = tool({
  inputSchema: z.object({ length: z.number() }),
  execute: async ({ length }) => 'seen '.repeat(length).slice(0, length),
});

describe('runBatch of mirrorAISDK tasks with total.wrapUp, runs interleaved (property)', () => {
  it('every run that made a call ends wrapped_up with its answer, its last call the final one, and the cap is never passed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          scripts: fc.array(fc.array(moveArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 }),
          concurrency: fc.integer({ min: 1, max: 4 }),
          capUsd: fc.constantFrom(0.01, 0.02, 0.04, 0.07, 0.15),
          maxOutput: fc.oneof(fc.integer({ min: 16, max: 64 }), fc.constantFrom(200, MAX_OUTPUT)),
        }),
        async ({ scripts, concurrency, capUsd, maxOutput }) => {
          const ledger: Ledger = { billedUsd: 0, requests: new Map() };
          const answers = new Map<string, string>();
          const tasks: FrameworkTask[] = scripts.map((moves, t) => ({
            id: `t${t}`,
            drive: async (mirror) => {
              const model = endlessModel(`t${t}`, moves, maxOutput, ledger);
              const m = mirrorAISDK({ mirror, model, tools: { look }, maxSteps: 10_000 });
              const result = await generateText({ ...m.settings, prompt: `work on t${t}`, maxOutputTokens: maxOutput });
              answers.set(`t${t}`, result.text);
              return result;
            },
          }));
          const report = await runBatch(tasks, {
            concurrency,
            total: { maxCostUsd: capUsd, strict: true, wrapUp: true },
            pricing,
            logger: false,
          });
          expect(ledger.billedUsd).toBeLessThanOrEqual(capUsd + 1e-12);
          expect(report.totals.costUsd).toBeLessThanOrEqual(capUsd + 1e-12);
          for (const run of report.runs) {
            if (run.outcome === 'skipped') continue;
            if (run.usage.llmCalls === 0) {
              // Started when the pool could not hold its first call beside its final one: no call, said so.
              expect(run.outcome).toBe('budget_exceeded');
              continue;
            }
            expect([run.id, run.outcome, run.error?.message]).toEqual([run.id, 'wrapped_up', undefined]);
            expect(answers.get(run.id)).toBe(`answer of ${run.id}`);
            const sent = ledger.requests.get(run.id)!;
            const last = sent.at(-1)!;
            expect(last.toolChoice).toEqual({ type: 'none' });
            expect(JSON.stringify(last.prompt.at(-1))).toContain(DEFAULT_WRAP_UP_INSTRUCTION);
            // Only the final call (and its retries) went without tools.
            const finals = sent.filter((o) => o.toolChoice?.type === 'none').length;
            expect(sent.slice(sent.length - finals).every((o) => o.toolChoice?.type === 'none')).toBe(true);
          }
        },
      ),
      { numRuns: 60, seed: 20261128 },
    );
  }, 120_000);
});

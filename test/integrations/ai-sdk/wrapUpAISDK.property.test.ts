import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import fc from 'fast-check';
import { z } from 'zod';
import {
  DEFAULT_TABLE,
  extendTable,
  runBatch,
  WRAP_UP_EXTENSION,
  type BatchTask,
  type Pricing,
} from 'agent-state-machine';
import { fromAISDK } from '../../../lib/integrations/ai-sdk';
import { checkPrompt } from './scriptedModel';

// runBatch of the adapter's ready-made AI SDK loop (fromAISDK) under a strict total with wrapUp,
// over random scripts: each call asks for one to three tool calls, with any output up to its max
// and results of any length, billed at a quarter of its bytes or at all of them; the max output
// tokens run from 16 (where a round's messages outweigh the response they carry) to 1,000. The
// runs share the pool, so a run's final call finds no room but its own hold. Every run that made
// a call ends wrapped_up with its answer, and the cap is never passed.

const USD_PER_TOKEN = 5e-6;
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * USD_PER_TOKEN;

interface Round {
  n: number;
  output: number;
  result: number;
}

const roundArb: fc.Arbitrary<Round> = fc.record({
  n: fc.integer({ min: 1, max: 3 }),
  output: fc.nat(1000),
  result: fc.oneof(fc.nat(40), fc.nat(4000)),
});

/** A model that would call tools for ever, playing `rounds` in a loop; a final call (toolChoice none) answers. */
function endlessModel(
  rounds: Round[],
  maxOutput: number,
  bytesPerToken: number,
  billed: { usd: number },
): MockLanguageModelV3 {
  let i = 0;
  return new MockLanguageModelV3({
    modelId: 'm',
    doGenerate: async (options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> => {
      checkPrompt(options.prompt);
      const round = rounds[i++ % rounds.length]!;
      const final = options.toolChoice?.type === 'none';
      const input = Math.ceil(JSON.stringify({ prompt: options.prompt, tools: options.tools }).length / bytesPerToken);
      const output = Math.min(maxOutput, options.maxOutputTokens ?? maxOutput, final ? 20 : round.output);
      billed.usd += (input + output) * USD_PER_TOKEN;
      const content = final
        ? [{ type: 'text' as const, text: 'the answer' }]
        : Array.from({ length: round.n }, (_, k) => ({
            type: 'tool-call' as const,
            toolCallId: `call-${i}-${k}`,
            toolName: 'look',
            input: JSON.stringify({ length: round.result }),
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

describe('runBatch of fromAISDK loops with total.wrapUp (property)', () => {
  it('every run that made a call ends wrapped_up with its answer, and the cap is never passed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          scripts: fc.array(fc.array(roundArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }),
          concurrency: fc.integer({ min: 1, max: 4 }),
          capUsd: fc.constantFrom(0.01, 0.02, 0.04, 0.07, 0.15),
          maxOutput: fc.oneof(fc.integer({ min: 16, max: 64 }), fc.constantFrom(200, 1000)),
          minOutputTokens: fc.constantFrom(1, 16, 256),
          bytesPerToken: fc.constantFrom(1, 4),
        }),
        async ({ scripts, concurrency, capUsd, maxOutput, minOutputTokens, bytesPerToken }) => {
          const billed = { usd: 0 };
          const tasks: BatchTask[] = scripts.map((rounds, t) => ({
            id: `t${t}`,
            input: `work on t${t}`,
            agent: () =>
              fromAISDK({
                model: endlessModel(rounds, maxOutput, bytesPerToken, billed),
                tools: { look },
                callSettings: { maxOutputTokens: maxOutput },
              }),
          }));
          const report = await runBatch(tasks, {
            concurrency,
            table: extendTable(DEFAULT_TABLE, WRAP_UP_EXTENSION),
            total: { maxCostUsd: capUsd, strict: true, wrapUp: true },
            minOutputTokens,
            pricing,
            logger: false,
          });
          expect(billed.usd).toBeLessThanOrEqual(capUsd + 1e-12);
          expect(report.totals.costUsd).toBeLessThanOrEqual(capUsd + 1e-12);
          for (const run of report.runs) {
            if (run.outcome === 'skipped') continue;
            // Started when the pool could not hold its first call beside its final one: no call, said so.
            if (run.usage.llmCalls === 0) {
              expect(run.outcome).toBe('budget_exceeded');
              continue;
            }
            expect([run.id, run.outcome, run.error?.message]).toEqual([run.id, 'wrapped_up', undefined]);
          }
        },
      ),
      {
        numRuns: 100,
        seed: 20261128,
        examples: [
          // A round of three tool calls outweighs a 57-token response: the final call fits only without it.
          [
            {
              scripts: [
                [{ n: 1, output: 0, result: 0 }],
                [{ n: 1, output: 0, result: 0 }],
                [{ n: 1, output: 0, result: 595 }],
                [
                  { n: 3, output: 57, result: 1000 },
                  { n: 1, output: 0, result: 0 },
                ],
              ],
              concurrency: 1,
              capUsd: 0.02,
              maxOutput: 57,
              minOutputTokens: 1,
              bytesPerToken: 4,
            },
          ],
          // The final call fits in its hold and the room left, but another run takes that room while its bound is awaited.
          [
            {
              scripts: [
                [{ n: 3, output: 0, result: 0 }],
                [
                  { n: 1, output: 43, result: 3664 },
                  { n: 1, output: 0, result: 0 },
                ],
                [
                  { n: 3, output: 62, result: 0 },
                  { n: 1, output: 0, result: 0 },
                ],
              ],
              concurrency: 3,
              capUsd: 0.04,
              maxOutput: 62,
              minOutputTokens: 1,
              bytesPerToken: 4,
            },
          ],
        ],
      },
    );
  }, 120_000);
});

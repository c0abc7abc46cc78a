import fc from 'fast-check';
import { TRANSITIONS } from '../../lib/machine/transitions';
import { type ScriptedReply, type TurnOutcome } from '../../lib/index';
import { drive } from '../helpers/drive';

// Tools: `ok` works, `fail` throws, `cancel` cancels the turn mid-tool, `tick` takes 700 ms.
const toolName = fc.constantFrom('ok', 'fail', 'cancel', 'tick');
const usageArb = fc.record({
  inputTokens: fc.nat(500),
  outputTokens: fc.nat(500),
  costUsd: fc.integer({ min: 0, max: 30 }).map((c) => c / 100),
});
const replyArb: fc.Arbitrary<ScriptedReply> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ text: fc.string(), usage: usageArb }) },
  {
    weight: 5,
    arbitrary: fc
      .record({ toolCalls: fc.array(toolName, { minLength: 1, maxLength: 3 }), usage: usageArb })
      .map(({ toolCalls, usage }) => ({
        usage,
        toolCalls: toolCalls.map((name, i) => ({ id: `call-${i}`, name })),
      })),
  },
  { weight: 1, arbitrary: fc.constant({ error: 'transient LLM failure' }) },
  // Broken contracts, some still reporting what they cost.
  {
    weight: 1,
    arbitrary: fc.constantFrom<ScriptedReply>(
      { raw: null },
      { raw: { text: 7, usage: { costUsd: 0.05, inputTokens: 10 } } },
      { raw: { toolCalls: 'bash' } },
    ),
  },
);
const budgetArb = fc.option(
  fc
    .record(
      {
        maxCostUsd: fc.integer({ min: 0, max: 100 }).map((c) => c / 100),
        maxToolCalls: fc.nat(8),
        maxLlmCalls: fc.nat(10),
        maxWallMs: fc.nat(5000),
      },
      { requiredKeys: [] },
      // Loops without llmCallBound: the dollar cap is the plain one, passed by at most one response.
    )
    .map((b) => (b.maxCostUsd === undefined ? b : { ...b, strict: false })),
  { nil: undefined },
);

/** Which terminal state (or Error standing in for it before any call) each outcome may end in. */
/** The tools the random replies call; `cancel` and `tick` act on the run being driven. */
function randomTools(driven: () => ReturnType<typeof drive>): NonNullable<Parameters<typeof drive>[0]['tools']> {
  return {
    ok: { output: 'ok' },
    fail: { error: 'tool failed' },
    cancel: (call) => (driven().adapter.cancel('random cancel'), { callId: call.id, output: 'done' }),
    tick: (call) => (driven().clock.advance(700), { callId: call.id, output: 'slow' }),
  };
}

const ENDS: Record<TurnOutcome, string[]> = {
  end_of_turn: ['EndOfTurn'],
  wrapped_up: ['EndOfTurn'],
  cancelled: ['Cancelled', 'Error'],
  budget_exceeded: ['BudgetExceeded', 'Error'],
  stalled: ['StallStopped'],
  error: ['Error'],
};

describe('AgentWithStateMachine with random scripted agents (property-based)', () => {
  it('never asks for an illegal move, ends every turn in a terminal state, and meters exactly what was reported', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(replyArb, { maxLength: 12 }),
        budgetArb,
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom('ok', 'git throws', 'git malformed', 'shouldRetry throws'),
        async (replies, budget, retries, turns, oddity) => {
          const d = drive(
            {
              replies,
              tools: randomTools(() => d),
              commits: [['c0'], [], ['c1', 'c2']],
              formatterMessages: ['formatted'],
            },
            {
              ...(budget === undefined ? {} : { budget }),
              retry: {
                retries,
                baseDelayMs: 1,
                shouldRetry: () => {
                  if (oddity === 'shouldRetry throws') throw new Error('predicate bug');
                  return true;
                },
              },
            },
          );
          if (oddity === 'git throws')
            d.agent.checkGitCommits = async () => Promise.reject(new Error('not a repository'));
          if (oddity === 'git malformed') d.agent.checkGitCommits = async () => 'abc' as never;
          const turnUsage = { costUsd: 0, inputTokens: 0, outputTokens: 0, llmCalls: 0, toolCalls: 0 };
          for (let t = 0; t < turns; t++) {
            const result = await d.adapter.runTurn(`turn ${t}`);
            expect(d.adapter.machine.isInTerminalState()).toBe(true);
            expect(ENDS[result.outcome as TurnOutcome]).toContain(d.adapter.machine.current);
            if (result.outcome !== 'end_of_turn') expect(result.error).toBeInstanceOf(Error);
            turnUsage.costUsd += result.usage.costUsd;
            turnUsage.inputTokens += result.usage.inputTokens;
            turnUsage.outputTokens += result.usage.outputTokens;
            turnUsage.llmCalls += result.usage.llmCalls;
            turnUsage.toolCalls += result.usage.toolCalls;
          }
          expect(d.rejected).toEqual([]);

          // Every non-forced move is in the table; forced ones go where the table has no edge:
          // Cancelled, or Error from the two states without an edge to it.
          const history = d.adapter.machine.history();
          history.forEach((r, i) => {
            if (i > 0) expect(r.from).toBe(history[i - 1]!.to);
            expect(TRANSITIONS[r.from].includes(r.to)).toBe(!r.forced);
            if (r.forced && r.to === 'Error') expect(['CheckingGitCommits', 'RunningAutoformatters']).toContain(r.from);
            else if (r.forced) expect(r.to).toBe('Cancelled');
          });

          // Usage = the sum of what the consumed replies reported, and of the turns' own usage.
          const llmCalls = d.agent.calls.filter((c) => c.op === 'sendUserMessage' || c.op === 'sendToolResults').length;
          // What each consumed reply reported: its usage, or a malformed reply's own usage field.
          const reported = replies
            .slice(0, llmCalls)
            .map((r) =>
              r.error !== undefined
                ? undefined
                : 'raw' in r
                  ? (r.raw as { usage?: ScriptedReply['usage'] } | null)?.usage
                  : r.usage,
            );
          const sum = (key: 'inputTokens' | 'outputTokens' | 'costUsd') =>
            reported.reduce((a, u) => a + (u?.[key] ?? 0), 0);
          const usage = d.adapter.usage;
          expect(usage.llmCalls).toBe(llmCalls);
          expect(usage.toolCalls).toBe(d.agent.calls.filter((c) => c.op === 'runTool').length);
          expect(usage.inputTokens).toBe(sum('inputTokens'));
          expect(usage.outputTokens).toBe(sum('outputTokens'));
          expect(usage.costUsd).toBeCloseTo(sum('costUsd'), 8);
          expect(turnUsage.llmCalls).toBe(usage.llmCalls);
          expect(turnUsage.toolCalls).toBe(usage.toolCalls);
          expect(turnUsage.costUsd).toBeCloseTo(usage.costUsd, 8);

          // A spent budget starts nothing more: at most one LLM call past the limit.
          if (budget?.maxLlmCalls !== undefined) expect(usage.llmCalls).toBeLessThanOrEqual(budget.maxLlmCalls);
          if (budget?.maxToolCalls !== undefined) expect(usage.toolCalls).toBeLessThanOrEqual(budget.maxToolCalls);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('runs a turn of an agent without the optional operations as it runs one whose operations return nothing', async () => {
    // The adapter does not await an operation the agent lacks; the turn must not tell.
    await fc.assert(
      fc.asyncProperty(
        fc.array(replyArb, { maxLength: 10 }),
        budgetArb,
        fc.integer({ min: 1, max: 3 }),
        async (replies, budget, turns) => {
          const run = async (withOps: boolean) => {
            const d = drive(
              {
                replies,
                tools: randomTools(() => d),
                ...(withOps ? { commits: [], additionalMessages: [] } : {}),
              },
              { ...(budget === undefined ? {} : { budget }), retry: { retries: 1, baseDelayMs: 1 } },
            );
            const results = [];
            for (let t = 0; t < turns; t++) results.push(await d.adapter.runTurn(`turn ${t}`));
            const asked = d.agent.calls.filter(
              (c) => c.op !== 'checkGitCommits' && c.op !== 'gatherAdditionalMessages',
            );
            return { results, history: d.adapter.machine.history(), asked, usage: d.adapter.usage };
          };
          const without = await run(false);
          const withOps = await run(true);
          expect(without).toEqual(withOps);
        },
      ),
      { numRuns: 300 },
    );
  });
});

import { generateText, stepCountIs, streamText, tool, ToolLoopAgent } from 'ai';
import { z } from 'zod';
import {
  AgentWithStateMachine,
  Budget,
  BudgetExceededError,
  InvalidArgumentError,
  type ExternalBudget,
  type Pricing,
  type SpentLimit,
  type UsageDelta,
} from 'agent-state-machine';
import { budgetFor, fromAISDK } from '../../../lib/integrations/ai-sdk';
import { call, scriptedModel, text, type Step } from './scriptedModel';

/** $0.02 a step: 1,000 input tokens at $10/M plus 500 output at $20/M. */
const pricing: Pricing = (usage) => ((usage.inputTokens ?? 0) * 10 + (usage.outputTokens ?? 0) * 20) / 1e6;
const priced = (content: Step extends infer S ? (S extends { content: infer C } ? C : never) : never): Step => ({
  content,
  usage: { input: 1000, output: 500 },
});
/** A model that asks for one more tool call every step, forever (within `n` steps). */
const endless = (n: number) => scriptedModel(Array.from({ length: n }, (_, i) => priced([call(`c${i}`, 'ping', {})])));
const ping = (log: string[] = []) =>
  tool({ inputSchema: z.object({}), execute: async (_input, { toolCallId }) => (log.push(toolCallId), 'pong') });
/** The shared pool runBatch gives its runs: elapsed wall time, labelled `shared budget`. */
const pool = (limits: ConstructorParameters<typeof Budget>[0]) =>
  new Budget(limits, { label: 'shared budget', elapsedWall: { clock: () => 0 } });

describe('budgetFor', () => {
  it('stops a generateText loop when a shared budget is spent, and a second loop never starts', async () => {
    const shared = pool({ maxCostUsd: 0.05 });
    const a = budgetFor(shared, { pricing });
    const model = endless(10);
    const result = await generateText({
      model,
      tools: a.wrapTools({ ping: ping() }),
      prompt: 'go',
      maxRetries: 0,
      prepareStep: a.prepareStep,
      stopWhen: [stepCountIs(20), a.stopWhen],
      onStepFinish: a.onStepFinish,
      abortSignal: a.abortSignal,
    });
    // $0.02, $0.04, $0.06: spent after the third step, and the loop stopped there.
    expect(result.steps).toHaveLength(3);
    expect(shared.usage).toMatchObject({
      costUsd: 0.06,
      llmCalls: 3,
      toolCalls: 3,
      inputTokens: 3000,
      outputTokens: 1500,
    });
    expect(a.usage).toMatchObject({ costUsd: 0.06, llmCalls: 3, toolCalls: 3 });
    expect(a.stopped?.message).toBe('shared budget exceeded: $0.0600 of $0.0500 after 3 LLM calls');

    const b = budgetFor(shared, { pricing });
    const other = endless(1);
    await expect(
      generateText({
        model: other,
        prompt: 'go',
        maxRetries: 0,
        prepareStep: b.prepareStep,
        stopWhen: b.stopWhen,
        onStepFinish: b.onStepFinish,
      }),
    ).rejects.toThrow(BudgetExceededError);
    expect(other.prompts).toHaveLength(0);
  });

  it('charges the same pool as an adapter run over fromAISDK', async () => {
    const shared = pool({ maxLlmCalls: 3 });
    const agent = new AgentWithStateMachine(
      fromAISDK({
        model: scriptedModel([priced([call('x', 'ping', {})]), priced([text('done')])]),
        tools: { ping: ping() },
      }),
      { sharedBudgets: [shared], logger: false },
    );
    expect((await agent.runTurn('one')).outcome).toBe('end_of_turn');
    const guard = budgetFor(shared);
    const result = await generateText({
      model: endless(5),
      tools: guard.wrapTools({ ping: ping() }),
      prompt: 'go',
      maxRetries: 0,
      ...guard,
      stopWhen: [stepCountIs(20), guard.stopWhen],
    });
    expect(result.steps).toHaveLength(1);
    expect(shared.usage.llmCalls).toBe(3);
  });

  it('.wrapTools() enforces maxToolCalls among the parallel calls of one step', async () => {
    const log: string[] = [];
    const budget = new Budget({ maxToolCalls: 2 });
    const guard = budgetFor(budget);
    const model = scriptedModel([
      priced([call('a', 'ping', {}), call('b', 'ping', {}), call('c', 'ping', {})]),
      priced([text('never')]),
    ]);
    const result = await generateText({
      model,
      tools: guard.wrapTools({ ping: ping(log) }),
      prompt: 'go',
      maxRetries: 0,
      ...guard,
      stopWhen: [stepCountIs(5), guard.stopWhen],
    });
    expect(log).toHaveLength(2);
    expect(budget.usage.toolCalls).toBe(2);
    const errors = result.steps[0]!.content.filter((p) => p.type === 'tool-error');
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as { error: unknown }).error)).toMatch(/not run: budget exceeded: 2 tool calls of 2/);
    expect(result.steps).toHaveLength(1);
    expect(model.prompts).toHaveLength(1);
  });

  it('counts the tool calls of unwrapped tools when their step finishes, but never invalid calls', async () => {
    const budget = new Budget({});
    const guard = budgetFor(budget);
    const model = scriptedModel([
      priced([call('a', 'ping', {}), call('bad', 'ping', '{not json')]),
      priced([text('ok')]),
    ]);
    await generateText({
      model,
      tools: { ping: ping() },
      prompt: 'go',
      maxRetries: 0,
      ...guard,
      stopWhen: [stepCountIs(5), guard.stopWhen],
    });
    expect(budget.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
  });

  it('throws for a step of unknown cost under a dollar cap, and charges $0 with onUnknownCost: ignore', async () => {
    const strict = budgetFor(new Budget({ maxCostUsd: 1 }));
    await expect(
      generateText({
        model: endless(3),
        tools: { ping: ping() },
        prompt: 'go',
        maxRetries: 0,
        ...strict,
        stopWhen: [stepCountIs(5), strict.stopWhen],
      }),
    ).rejects.toThrow(/cost an unknown amount \(1000 input, 500 output tokens\) under a maxCostUsd budget/);

    const lax = budgetFor(new Budget({ maxCostUsd: 1 }), { onUnknownCost: 'ignore' });
    const result = await generateText({
      model: endless(3),
      tools: { ping: ping() },
      prompt: 'go',
      maxRetries: 0,
      ...lax,
      stopWhen: [stepCountIs(2), lax.stopWhen],
    });
    expect(result.steps).toHaveLength(2);
    expect(lax.usage).toMatchObject({ costUsd: 0, inputTokens: 2000 });
  });

  it('puts budgets on a ToolLoopAgent', async () => {
    const budget = new Budget({ maxLlmCalls: 2 });
    const guard = budgetFor(budget);
    const agent = new ToolLoopAgent({
      model: endless(5),
      tools: guard.wrapTools({ ping: ping() }),
      maxRetries: 0,
      prepareStep: guard.prepareStep,
      onStepFinish: guard.onStepFinish,
      stopWhen: [stepCountIs(20), guard.stopWhen],
    });
    const result = await agent.generate({ prompt: 'go', abortSignal: guard.abortSignal });
    expect(result.steps).toHaveLength(2);
    expect(guard.stopped?.limit).toBe('maxLlmCalls');
  });

  it('charges each streamText step once', async () => {
    const budget = new Budget({ maxCostUsd: 0.03 });
    const guard = budgetFor(budget, { pricing });
    const result = streamText({
      model: endless(5),
      tools: guard.wrapTools({ ping: ping() }),
      prompt: 'go',
      maxRetries: 0,
      ...guard,
      stopWhen: [stepCountIs(20), guard.stopWhen],
      onError: () => {},
    });
    await result.consumeStream();
    expect(await result.steps).toHaveLength(2);
    expect(budget.usage).toMatchObject({ costUsd: 0.04, llmCalls: 2, toolCalls: 2 });
  });

  it('reserves each call with an ExternalBudget and charges it the usage', async () => {
    const reserved: string[] = [];
    const charges: UsageDelta[] = [];
    const external: ExternalBudget = {
      reserve: async (kind) => {
        reserved.push(kind);
        const llm = reserved.filter((k) => k === 'llm').length;
        return llm > 2
          ? ({
              limit: 'maxLlmCalls',
              used: 2,
              max: 2,
              message: 'shared budget exceeded: 2 LLM calls of 2 after 2 LLM calls',
            } satisfies SpentLimit)
          : undefined;
      },
      charge: async (delta) => (charges.push(delta), undefined),
    };
    const guard = budgetFor(external, { pricing });
    await expect(
      generateText({
        model: endless(5),
        tools: guard.wrapTools({ ping: ping() }),
        prompt: 'go',
        maxRetries: 0,
        ...guard,
        stopWhen: [stepCountIs(20), guard.stopWhen],
      }),
    ).rejects.toThrow(BudgetExceededError);
    expect(reserved).toEqual(['llm', 'tool', 'llm', 'tool', 'llm']);
    // Calls were counted by reserve; charges carry tokens and dollars only.
    expect(charges.map((c) => [c.llmCalls, c.toolCalls, c.costUsd])).toEqual([
      [0, 0, 0.02],
      [0, 0, 0.02],
    ]);
    expect(guard.stopped?.limit).toBe('maxLlmCalls');
  });

  it('.abortSignal aborts a hanging step at the maxWallMs deadline', async () => {
    const guard = budgetFor(new Budget({ maxWallMs: 20 }));
    const error = await generateText({
      model: scriptedModel([{ hang: true }]),
      prompt: 'go',
      maxRetries: 0,
      ...guard,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect((error as BudgetExceededError).limit).toBe('maxWallMs');
    expect(guard.stopped?.limit).toBe('maxWallMs');
    // The deadline is the library's one meter (UsageMeter): its message is every budget's.
    expect((error as Error).message).toMatch(/^budget exceeded: \d+ ms of wall time, of 20 ms after 1 LLM call$/);
    guard.dispose();
  });

  it('.abortSignal waits out a 30-day maxWallMs: no TimeoutOverflowWarning, no abort at once', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): number => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const guard = budgetFor(new Budget({ maxWallMs: 30 * 24 * 60 * 60 * 1000 }));
      const result = await generateText({
        model: scriptedModel([{ content: [{ type: 'text', text: 'done' }] }]),
        prompt: 'go',
        maxRetries: 0,
        ...guard,
      });
      expect(result.text).toBe('done');
      // A delay past 2^31 − 1 ms would have fired on the next tick (and warned): give it several.
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(guard.abortSignal.aborted).toBe(false);
      guard.dispose();
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('.abortSignal follows the caller signal', () => {
    const caller = new AbortController();
    const guard = budgetFor(new Budget({}), { signal: caller.signal });
    expect(guard.abortSignal.aborted).toBe(false);
    caller.abort('stop');
    expect(guard.abortSignal.aborted).toBe(true);
  });

  it('rejects bad arguments by name', () => {
    expect(() => budgetFor({} as never)).toThrow(InvalidArgumentError);
    expect(() => budgetFor([])).toThrow(/`budgets`/);
    expect(() => budgetFor([new Budget(), 3 as never])).toThrow(/`budgets\[1\]`/);
    expect(() => budgetFor(new Budget(), { pricing: 0.1 as never })).toThrow(/`pricing`/);
    expect(() => budgetFor(new Budget(), { onUnknownCost: 'warn' as never })).toThrow(/`onUnknownCost`/);
  });
});

import { OperationError, type Pricing } from '../../lib/index';
import { drive } from '../helpers/drive';

const tokens = { inputTokens: 1000, outputTokens: 100 };

describe('AgentWithStateMachine cost from tokens', () => {
  it('.runTurn() charges what pricing computes when a response reports tokens but no cost, and keeps model and finishReason', async () => {
    const seen: unknown[] = [];
    const pricing: Pricing = (usage, { model }) => {
      seen.push([usage, model]);
      return model === 'gpt-x' ? (usage.inputTokens ?? 0) * 1e-6 + (usage.outputTokens ?? 0) * 4e-6 : undefined;
    };
    const d = drive(
      { replies: [{ raw: { text: 'hi', usage: tokens, model: 'gpt-x', finishReason: 'stop' } }] },
      { pricing, budget: { maxCostUsd: 1, strict: false } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    expect(result.usage.costUsd).toBe(0.0014);
    expect(seen).toEqual([[tokens, 'gpt-x']]);
    expect(d.adapter.machine.history().find((r) => r.to === 'ProcessingLLMResponse')!.data).toMatchObject({
      model: 'gpt-x',
      finishReason: 'stop',
    });
  });

  it('.runTurn() ends in Error when maxCostUsd is set and the cost is unknown, naming the operation, tokens and model', async () => {
    const d = drive(
      { replies: [{ raw: { text: 'hi', usage: tokens, model: 'mystery-1' } }] },
      { budget: { maxCostUsd: 0.01, strict: false } },
    );
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('error');
    expect(result.error).toBeInstanceOf(OperationError);
    expect(result.error!.message).toBe(
      "cost failed: sendUserMessage reported 1100 tokens (1000 in, 100 out) but no costUsd for model mystery-1, and no pricing option is set: maxCostUsd cannot be enforced (set pricing, or onUnknownCost: 'warn' or 'ignore')",
    );
    expect(result.usage).toMatchObject({ inputTokens: 1000, outputTokens: 100, llmCalls: 1 });
  });

  it('.runTurn() with pricing returning undefined says so', async () => {
    const d = drive(
      { replies: [{ raw: { text: 'hi', usage: tokens } }] },
      { budget: { maxCostUsd: 0.01, strict: false }, pricing: () => undefined },
    );
    expect((await d.adapter.runTurn('go')).error!.message).toContain(
      'for model (not reported), and pricing returned undefined',
    );
  });

  it('.runTurn() with maxTokens and a response reporting no tokens ends in Error', async () => {
    const d = drive({ replies: [{ text: 'hi' }] }, { budget: { maxTokens: 100 } });
    expect((await d.adapter.runTurn('go')).error!.message).toContain(
      'sendUserMessage reported no tokens (model (not reported)): maxTokens cannot be enforced',
    );
  });

  it("onUnknownCost: 'warn' logs once per agent and notes it in the history; 'ignore' goes on silently", async () => {
    const warnings: string[] = [];
    const logger = {
      error: () => undefined,
      warn: (m: string) => warnings.push(m),
      info: () => undefined,
      debug: () => undefined,
    };
    const d = drive(
      { replies: [{ raw: { text: 'a', usage: tokens } }, { raw: { text: 'b', usage: tokens } }] },
      { budget: { maxCostUsd: 1, strict: false }, onUnknownCost: 'warn', logger },
    );
    expect((await d.adapter.runTurn('1')).outcome).toBe('end_of_turn');
    expect((await d.adapter.runTurn('2')).outcome).toBe('end_of_turn');
    expect(warnings.filter((w) => w.includes('maxCostUsd cannot be enforced'))).toHaveLength(1);
    const notes = d.adapter.machine
      .history()
      .filter((r) => r.to === 'ProcessingLLMResponse')
      .map((r) => (r.data as { unknownCost?: string }).unknownCost);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toContain('maxCostUsd cannot be enforced');

    const quiet = drive(
      { replies: [{ raw: { text: 'a', usage: tokens } }] },
      { budget: { maxCostUsd: 1, strict: false }, onUnknownCost: 'ignore' },
    );
    expect((await quiet.adapter.runTurn('1')).outcome).toBe('end_of_turn');
  });

  it('.runTurn() charges the valid fields of malformed usage and records the bad ones', async () => {
    const d = drive({ replies: [{ raw: { text: 'hi', usage: { costUsd: 5, inputTokens: Number.NaN } } }] });
    const result = await d.adapter.runTurn('go');
    expect(result.outcome).toBe('end_of_turn');
    expect(result.usage.costUsd).toBe(5);
    expect(result.usage.inputTokens).toBe(0);
    expect(d.adapter.machine.history().find((r) => r.to === 'ProcessingLLMResponse')!.data).toMatchObject({
      usageProblems: ['usage.inputTokens must be a non-negative number, got `NaN` (number)'],
    });
  });

  it('.runTurn() ends in Error when pricing throws or returns a bad value', async () => {
    const d = drive({ replies: [{ raw: { text: 'hi', usage: tokens } }] }, { pricing: () => -1 });
    expect((await d.adapter.runTurn('go')).error!.message).toBe(
      'pricing failed: returned -1 for model (none), expected a non-negative number of USD or undefined',
    );
  });

  it('new AgentWithStateMachine() rejects a bad pricing, onUnknownCost or toolConcurrency', () => {
    expect(() => drive({ replies: [] }, { pricing: 5 as never })).toThrow('Expected `pricing` to be a function');
    expect(() => drive({ replies: [] }, { onUnknownCost: 'loud' as never })).toThrow(
      "Expected `onUnknownCost` to be 'error', 'warn' or 'ignore'",
    );
    expect(() => drive({ replies: [] }, { toolConcurrency: 0 })).toThrow(
      'Expected `toolConcurrency` to be a positive integer or Infinity',
    );
  });
});

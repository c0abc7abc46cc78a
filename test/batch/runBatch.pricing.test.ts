import { createScriptedAgent, runBatch } from '../../lib/index';

const tokens = { inputTokens: 1000, outputTokens: 100 };

describe('runBatch() cost options', () => {
  it('prices token-only usage with pricing, and stops a run whose cost is unknown under a cost cap', async () => {
    const agent = () => createScriptedAgent({ replies: [{ text: 'ok', usage: tokens }] });
    const priced = await runBatch([{ id: 'a', input: 'x', agent }], {
      logger: false,
      perRun: { maxCostUsd: 1, strict: false },
      pricing: (u) => (u.inputTokens ?? 0) * 1e-5,
    });
    expect(priced.runs[0]!.outcome).toBe('end_of_turn');
    expect(priced.totals.costUsd).toBe(0.01);

    const unknown = await runBatch([{ id: 'a', input: 'x', agent }], {
      logger: false,
      total: { maxCostUsd: 1, strict: false },
    });
    expect(unknown.runs[0]!.outcome).toBe('error');
    expect(unknown.runs[0]!.error!.message).toContain('maxCostUsd cannot be enforced');

    const warned = await runBatch([{ id: 'a', input: 'x', agent }], {
      logger: false,
      total: { maxCostUsd: 1, strict: false },
      onUnknownCost: 'ignore',
    });
    expect(warned.runs[0]!.outcome).toBe('end_of_turn');
  });

  it('refuses, before any run, a strict dollar cap or a wrapUp with no pricing: every run would end in error', async () => {
    let made = 0;
    const bound = { inputTokens: 10, maxOutputTokens: 10, model: 'm' };
    const agent = () => {
      made += 1;
      return createScriptedAgent({ replies: [{ text: 'ok', usage: tokens }], bound });
    };
    const tasks = [{ id: 'a', input: 'x', agent }];
    const strict =
      /^Expected `pricing` to be a function pricing the calls, since `perRun\.maxCostUsd` is a strict cap \(caps are strict by default\): each call's worst case is held in dollars before it starts, so without it every run would end in error at its first call, whatever `onUnknownCost` says; pass `pricing`, a function \(usage, \{ model \}\) => USD or undefined: createPricing\(\) from 'agent-state-machine\/pricing', or your own \(createPricing needs the @pydantic\/genai-prices package\), or set `strict: false` beside `maxCostUsd` when your loop reports costUsd, got `undefined`$/;
    await expect(runBatch(tasks, { logger: false, perRun: { maxCostUsd: 1 } })).rejects.toThrow(strict);
    // onUnknownCost does not help: the hold before the call needs a price.
    await expect(
      runBatch(tasks, { logger: false, perRun: { maxCostUsd: 1 }, onUnknownCost: 'ignore' }),
    ).rejects.toThrow(strict);
    await expect(runBatch(tasks, { logger: false, total: { maxCostUsd: 1, strict: true } })).rejects.toThrow(
      /since `total\.maxCostUsd` is a strict cap/,
    );
    await expect(
      runBatch(tasks, { logger: false, total: { maxCostUsd: 1, strict: false, wrapUp: true } }),
    ).rejects.toThrow(
      /^Expected `pricing` to be a function pricing the calls, since `total\.wrapUp` is set: .*createPricing\(\)/,
    );
    expect(made).toBe(0);
  });

  it('rejects a bad toolConcurrency before any run, naming it', async () => {
    await expect(runBatch([], { toolConcurrency: 0 })).rejects.toThrow(
      'Expected `toolConcurrency` to be a positive integer or Infinity',
    );
  });
});

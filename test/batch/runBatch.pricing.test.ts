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

  it('rejects a bad toolConcurrency before any run, naming it', async () => {
    await expect(runBatch([], { toolConcurrency: 0 })).rejects.toThrow(
      'Expected `toolConcurrency` to be a positive integer or Infinity',
    );
  });
});

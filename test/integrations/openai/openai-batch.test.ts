import { CONCURRENCY, TASKS, TOTAL_CAP_USD, runOpenAIBatchExample } from '../../../examples/openai-batch';

describe('examples/openai-batch', () => {
  it('runs fresh OpenAI loops under a shared dollar cap priced from tokens, and stops part-way', async () => {
    const lines: string[] = [];
    const { report, rejected } = await runOpenAIBatchExample({
      print: (l) => lines.push(l),
      sleep: async () => undefined,
    });
    const { outcomes, costUsd } = report.totals;
    expect(report.runs).toHaveLength(TASKS);
    expect(outcomes.end_of_turn).toBeGreaterThan(0);
    expect(outcomes.skipped).toBeGreaterThan(0);
    expect(outcomes.error).toBe(0);
    // One response: 10,000 uncached input at $0.15/M, 10,000 cached at $0.075/M, 1,000 output at $0.60/M.
    const perResponse = (10_000 * 0.15 + 10_000 * 0.075 + 1_000 * 0.6) / 1e6;
    const completed = report.runs.filter((r) => r.outcome === 'end_of_turn');
    for (const run of completed) expect(run.usage.costUsd).toBeCloseTo(2 * perResponse, 10);
    expect(costUsd).toBeGreaterThanOrEqual(TOTAL_CAP_USD);
    expect(costUsd).toBeLessThanOrEqual(TOTAL_CAP_USD + CONCURRENCY * perResponse + 1e-9);
    expect(rejected).toBe(0);
    expect(lines.join('\n')).toContain('Runs by outcome');
  });
});

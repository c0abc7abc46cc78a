import { createScriptedAgent, formatBatchReport, runBatch } from '../../lib/index';

describe("a run's reason gives the run's own figures, and a batch cap's the batch's", () => {
  it('says a run stopped by the batch total is stopped by the batch, with both figures, rounded as the report rounds them', async () => {
    // Each run's first call costs $0.03: three in flight pass the batch's $0.08 together.
    const tasks = Array.from({ length: 6 }, (_, i) => ({
      id: `t${i}`,
      input: 'go',
      agent: () =>
        createScriptedAgent({
          replies: [
            { toolCalls: [{ id: 'c1', name: 'bash' }], usage: { costUsd: 0.03 } },
            { text: 'done', usage: { costUsd: 0.03 } },
          ],
          tools: { bash: { output: 'ok' } },
          sleep: async () => undefined,
        }),
    }));
    const report = await runBatch(tasks, { logger: false, concurrency: 3, total: { maxCostUsd: 0.08, strict: false } });
    const stopped = report.runs.filter((r) => r.outcome === 'budget_exceeded');
    expect(stopped.length).toBe(3);
    for (const run of stopped)
      expect(run.error!.message).toBe(
        "the batch's total budget exceeded: $0.0900 of $0.0800 after 3 LLM calls; this run: cost $0.0300 after 1 LLM call",
      );
    expect(report.totals.costUsd).toBeCloseTo(0.09, 10);
    // The report's figure for the batch is the reason's.
    expect(formatBatchReport(report)).toMatch(/cost\s+\$0\.0900\s+\$0\.0800 \(113%\)/);
  });

  it('gives a run stopped by its own cap its own figures alone', async () => {
    const agent = () =>
      createScriptedAgent({
        replies: [
          { toolCalls: [{ id: 'c1', name: 'bash' }], usage: { costUsd: 0.03 } },
          { text: 'done', usage: { costUsd: 0.03 } },
        ],
        tools: { bash: { output: 'ok' } },
        sleep: async () => undefined,
      });
    const report = await runBatch(
      [
        { id: 'a', input: 'go', agent },
        { id: 'b', input: 'go', agent },
      ],
      { logger: false, perRun: { maxCostUsd: 0.02, strict: false }, total: { maxCostUsd: 1, strict: false } },
    );
    for (const run of report.runs)
      expect(run.error!.message).toBe('budget exceeded: $0.0300 of $0.0200 after 1 LLM call');
  });
});

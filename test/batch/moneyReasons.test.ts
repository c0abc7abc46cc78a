// A batch's report says why its money is uncertain, as each run's file does: the Money line of
// formatBatchReport names the reasons and how many calls each covers, and each run row carries its own.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { formatBatchReport, observeTask, runBatch } from 'agent-state-machine';
import { meteredFetch } from '../../lib/integrations/openai';
import { startBillingServer } from '../helpers/billingServer';
import { localPricing as pricing } from '../helpers/localPricing';

it('names the reason of each uncertain charge in the Money line, with its count of calls', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-money-reasons-'));
  const billing = await startBillingServer(3000);
  // Every other request fails after the work (a 500: it may have been billed); the client retries it.
  billing.reset(['500', 'ok']);
  try {
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: billing.server.baseURL, fetch: meteredFetch });
    const ask = async (input: string): Promise<string> =>
      (
        await client.chat.completions.create({
          model: 'gpt-local',
          messages: [{ role: 'user', content: input }],
          max_completion_tokens: 100,
        })
      ).choices[0]?.message.content ?? '';
    const report = await runBatch(
      Array.from({ length: 3 }, (_, i) => observeTask(`t${i}`, `task ${i}`, ask)),
      { logger: false, historyDir: dir, pricing, concurrency: 1 },
    );
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
    for (const run of report.runs) expect(run.uncertain).toEqual([{ why: expect.stringMatching(/500/), calls: 1 }]);
    expect(report.totals.uncertainUsd).toBeGreaterThan(0);
    const money = formatBatchReport(report)
      .split('\n')
      .find((l) => l.includes('Money:'))!;
    expect(money).toMatch(/billed, \$\d+\.\d+ uncertain \(3 LLM calls: .*500/);
    // Resumed, the runs are found ended: the report says the same money, apart, and why.
    const again = await runBatch(
      Array.from({ length: 3 }, (_, i) => observeTask(`t${i}`, `task ${i}`, ask)),
      { logger: false, historyDir: dir, pricing, concurrency: 1, resume: true },
    );
    expect(again.runs.map((r) => r.resumed)).toEqual(['finished', 'finished', 'finished']);
    expect(again.totals.uncertainUsd).toBeCloseTo(report.totals.uncertainUsd, 10);
    expect(again.totals.costUsd).toBeCloseTo(report.totals.costUsd, 10);
    for (const run of again.runs) expect(run.uncertain).toEqual([{ why: expect.stringMatching(/500/), calls: 1 }]);
    expect(
      formatBatchReport(again)
        .split('\n')
        .find((l) => l.includes('Money:')),
    ).toBe(money);
  } finally {
    await billing.server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

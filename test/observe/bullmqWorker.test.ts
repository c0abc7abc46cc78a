// Your own loop on BullMQ workers: each worker's `run` observes it (observeLoop with the mirror
// the worker gives), its `openai` client metered at the wire, under a strict dollar cap kept in
// Redis for the whole batch. The billing server bills every request it takes: what it billed stays
// under the cap, the report counts at least that, and every request it saw is a journaled attempt.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { observeLoop } from 'agent-state-machine';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { meteredFetch } from '../../lib/integrations/openai';
import { startBatchWorker, submitBatch, type BatchWorkerHandle } from '../../lib/integrations/bullmq/index';
import { startBillingServer } from '../helpers/billingServer';
import { localPricing as pricing } from '../helpers/localPricing';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../helpers/redis';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

it('two workers observe the loop: the server billed under the strict cap, and every request is journaled', async () => {
  const prefix = uniquePrefix('observe');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-observe-bullmq-'));
  const billing = await startBillingServer(3000);
  billing.reset(['ok', '500', 'ok', '429', 'noUsage']);
  const client = new OpenAI({ apiKey: 'sk-local', baseURL: billing.server.baseURL, fetch: meteredFetch });
  const loop = async (input: string): Promise<string> =>
    (
      await client.chat.completions.create({
        model: 'gpt-local',
        messages: [{ role: 'user', content: input }],
        max_completion_tokens: 1000,
      })
    ).choices[0]?.message.content ?? '';
  const workers: BatchWorkerHandle[] = [];
  try {
    for (const id of ['wa', 'wb'])
      workers.push(
        startBatchWorker({
          connection: url,
          name: 'runs',
          prefix,
          workerId: id,
          concurrency: 2,
          historyDir: dir,
          journal: true,
          pricing,
          onError: false,
          drive: (task, mirror) => observeLoop(mirror, task.input, () => loop(task.input)),
        }),
      );
    const tasks = Array.from({ length: 12 }, (_, i) => ({ id: `t${i}`, input: `task ${i}` }));
    const batch = await submitBatch(tasks, {
      connection: url,
      name: 'runs',
      prefix,
      total: { maxCostUsd: 0.05, strict: true },
    });
    const report = await batch.report();
    expect(report.runs).toHaveLength(12);
    expect(billing.billing.usd).toBeLessThanOrEqual(0.05);
    expect(report.budget.costUsd).toBeGreaterThanOrEqual(billing.billing.usd - 1e-9);
    expect(report.totals.outcomes.end_of_turn).toBeGreaterThan(0);
    let attempts = 0;
    for (const run of report.runs.filter((r) => r.historyFile !== undefined)) {
      const history = await loadHistory(run.historyFile!);
      expect(validateHistory(history.entries).issues).toEqual([]);
      attempts += history.journal.filter((line) => line.type === 'llm').length;
    }
    expect(attempts).toBe(billing.server.exchanges.length);
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await deletePrefix(url, prefix);
    await billing.server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

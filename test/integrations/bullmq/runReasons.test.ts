// A distributed batch's report says why a run's money is uncertain, and why calls are of unknown
// cost, as runBatch's does: each run's records know each call's reason, and its worker reports
// them. Real Redis, a real worker writing history files.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, formatBatchReport, type AgentLoop } from 'agent-state-machine';
import { FileStore } from 'agent-state-machine/batch';
import { startBatchWorker, submitBatch, type BatchWorkerHandle } from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { ONE_RUN } from '../../helpers/threeFigures';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

/** Its first call fails with a 500 after the request left (may have been billed: its hold charged), its second is answered. */
function failsThenAnswers(): AgentLoop {
  return createScriptedAgent({
    replies: [{ error: 'HTTP 500' }, { text: 'ok', model: 'gpt-local', usage: { inputTokens: 100, outputTokens: 20 } }],
    bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
    sleep: async () => undefined,
  });
}

/** Answered at once by a model the pricing does not know: its cost is unknown. */
function unknownModel(): AgentLoop {
  return createScriptedAgent({
    replies: [{ text: 'ok', model: 'other-model', usage: { inputTokens: 100, outputTokens: 20 } }],
    bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'other-model' },
    sleep: async () => undefined,
  });
}

it.each(['historyDir', 'store'] as const)(
  "names each run's reasons for uncertain money and unknown costs in the report, as runBatch does (%s)",
  async (kept) => {
    const prefix = uniquePrefix('runreasons');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-bullmq-reasons-'));
    let worker: BatchWorkerHandle | undefined;
    try {
      worker = startBatchWorker({
        connection: url,
        name: 'runs',
        prefix,
        ...(kept === 'historyDir' ? { historyDir: dir } : { store: new FileStore(dir) }),
        // Each call's line in the run's records says why its money is uncertain, or its cost unknown.
        journal: true,
        // $5 a million tokens for gpt-local; another model has no price.
        pricing: (u, { model }) =>
          model === 'gpt-local' ? ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 5e-6 : undefined,
        onError: false,
        agent: (task) => (task.id === 'unknown' ? unknownModel() : failsThenAnswers()),
      });
      // A strict cap holds each call's worst case: the 500's hold is charged, uncertain.
      const capped = await submitBatch([{ id: 'fails', input: 'go' }], {
        connection: url,
        name: 'runs',
        prefix,
        retry: { retries: 2, baseDelayMs: 1 },
        total: { maxCostUsd: 1 },
      });
      const report = await capped.report();
      const [fails] = report.runs;
      expect(fails).toMatchObject({ outcome: 'end_of_turn', usage: { uncertainUsd: ONE_RUN.uncertainUsd } });
      expect(fails!.uncertain).toEqual([{ why: expect.stringMatching(/500/), calls: 1 }]);
      const money = formatBatchReport(report)
        .split('\n')
        .find((l) => l.includes('Money:'));
      expect(money).toMatch(/uncertain \(1 LLM call: .*500/);
      // No cap (a strict one refuses a call it cannot price): the unknown model's call is in no dollar figure.
      const uncapped = await submitBatch([{ id: 'unknown', input: 'go' }], { connection: url, name: 'runs', prefix });
      const [unknown] = (await uncapped.report()).runs;
      expect(unknown).toMatchObject({ outcome: 'end_of_turn', usage: { unpricedCalls: 1 } });
      expect(unknown!.unpriced).toEqual([{ why: expect.stringMatching(/other-model/), calls: 1 }]);
    } finally {
      await worker?.close();
      await deletePrefix(url, prefix);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
  30_000,
);

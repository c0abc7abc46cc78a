// A resumed run that fails before its turn starts (its history cannot be opened) never counted
// what its cut-off attempt spent, which a turn's start counts: the batch counts it, for an agent
// task and a framework task alike, and its report keeps the money that was spent.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, runBatch, type BatchTask, type FrameworkTask } from '../../lib/index';
import { FileStore, type RunStore, type StoreBatch } from '../../lib/subpaths/batch';
import { manualClock } from '../helpers/manualClock';

let root: string;
beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-resume-unopened-'))));
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.01 };
const agentTask: BatchTask = {
  id: 'agent',
  input: 'go',
  agent: () =>
    createScriptedAgent({
      sleep: async () => undefined,
      replies: [
        { toolCalls: [{ id: 'c1', name: 'look', input: {} }], usage },
        { text: 'done', usage },
      ],
      tools: { look: { output: 'seen' } },
    }),
};
const frameworkTask: FrameworkTask = {
  id: 'framework',
  input: 'go',
  drive: async (mirror) => {
    for (const text of ['first', 'second'])
      await mirror.model({
        send: () => Promise.resolve(text),
        read: () => ({ text, usage }),
        served: () => text,
      });
  },
};

/** `store`, whose batches refuse to open a run: the history of a resumed run cannot be opened. */
function refusingRuns(store: RunStore): RunStore {
  return Object.assign(Object.create(store) as RunStore, {
    openBatch: async (options: Parameters<RunStore['openBatch']>[0]): Promise<StoreBatch> => {
      const batch = await store.openBatch(options);
      return Object.assign(Object.create(batch) as StoreBatch, {
        openRun: () => Promise.reject(new Error('the store is down')),
      });
    },
  });
}

it.each([
  ['an agent task', agentTask],
  ['a framework task', frameworkTask],
])('%s resumed whose history cannot be opened keeps its cut-off attempt’s spend', async (_, task) => {
  const store = new FileStore(root);
  const options = { logger: false as const, clock: manualClock().now, batchId: 'b' };
  await runBatch([task], { ...options, store });
  // Cut after the first answered call: that call, $0.01, was spent.
  const file = path.join(root, 'b', `${task.id}.jsonl`);
  const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
  const firstAnswer = lines.findIndex((l) => l.includes('"type":"llm"'));
  fs.writeFileSync(file, lines.slice(0, firstAnswer + 1).join(''));

  const report = await runBatch([task], { ...options, store: refusingRuns(store), resume: true });
  const run = report.runs[0]!;
  expect(run.outcome).toBe('error');
  expect(run.error!.message).toMatch(/the store is down/);
  expect(run.usage.costUsd).toBe(0.01);
  expect(report.totals).toMatchObject({ costUsd: 0.01 });
});

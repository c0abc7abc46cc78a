// A run taken over from a worker whose lock lapsed, continued from its journal in the store: the
// tool call the first attempt had started (no result journaled) follows the taking worker's
// `resumeTools`, as a resumed runBatch's does — run again under `rerun`, answered as interrupted
// by default. Real Redis and PostgreSQL; the lock's expiry is the test's move (it deletes the key).
import { createScriptedAgent, type ScriptedAgent, type ScriptedReply } from 'agent-state-machine';
import { Redis } from 'ioredis';
import { PostgresStore } from '../../../lib/integrations/postgres/PostgresStore';
import {
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedTask,
} from '../../../lib/integrations/bullmq/index';
import { PG_URL, storedRuns, testSchema, type TestSchema } from '../../helpers/postgres';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { lapseLock, lapsingWorker } from '../../helpers/lapsingWorker';
import { moment, until } from '../../helpers/moment';

const USAGE = { inputTokens: 1, outputTokens: 1 };
const REPLIES: ScriptedReply[] = [
  { toolCalls: [{ id: 'r1', name: 'read', input: { path: 'a.txt' } }], usage: USAGE },
  { text: 'done', usage: USAGE },
];

describe("startBatchWorker({ resumeTools }): a taken-over run's cut-off tool call", () => {
  let url: string;
  let db: TestSchema;
  beforeAll(async () => {
    url = await testRedisUrl();
  });
  afterAll(() => releaseRedis());
  beforeEach(async () => {
    db = await testSchema();
  });
  afterEach(() => db.drop());

  it.each([
    ['rerun', 'the read runs again on the worker that took it over', { rerun: ['read'] }],
    ['serve (the default)', 'the read is answered as interrupted, not run', undefined],
  ] as const)(
    '%s: %s',
    async (_name, _what, resumeTools) => {
      const prefix = uniquePrefix('resumetools');
      const redis = new Redis(url);
      const store = new PostgresStore(PG_URL, { schema: db.schema });
      const workers: BatchWorkerHandle[] = [];
      const agents: ScriptedAgent[] = [];
      const inTool = moment("the first attempt's read");
      const letGo = moment('the first attempt let go');
      const agent = (): ScriptedAgent => {
        const first = agents.length === 0;
        const made = createScriptedAgent({
          replies: REPLIES,
          tools: {
            read: async (call) => {
              if (first) {
                inTool.reached();
                await letGo.wait();
              }
              return { callId: call.id, output: first ? 'read by the first attempt' : 'read again' };
            },
          },
        });
        agents.push(made);
        return made;
      };
      const start = (id: string, policy?: { rerun: readonly string[] }) =>
        lapsingWorker({
          connection: url,
          prefix,
          workerId: id,
          agent,
          store,
          journal: true,
          ...(policy === undefined ? {} : { resumeTools: policy }),
          onError: false,
        });
      try {
        workers.push(start('first'));
        const tasks: DistributedTask[] = [{ id: 't0', input: 'read a.txt' }];
        const batch = await submitBatch(tasks, { connection: url, name: 'runs', prefix, retryLostRuns: 1, store });
        await inTool.wait();
        // The first response is journaled in the store before the takeover reads it.
        await until('the first answer in the store', async () =>
          /"type":"llm"/.test((await storedRuns(store, batch.batchId, ['t0'])).get('t0') ?? ''),
        );
        await lapseLock(redis, prefix);
        workers.push(start('takeover', resumeTools));

        const report = await batch.report();
        const run = report.runs[0]!;
        expect(run).toMatchObject({ id: 't0', outcome: 'end_of_turn', attempt: 2, worker: 'takeover' });
        const taking = agents[1]!;
        // The answered call is served from the journal, never sent again.
        expect(taking.calls.filter((c) => c.op === 'sendUserMessage')).toHaveLength(0);
        const sent = taking.calls.find((c) => c.op === 'sendToolResults');
        const ran = taking.calls.some((c) => c.op === 'runTool');
        if (resumeTools === undefined) {
          expect(ran).toBe(false);
          expect(sent?.op === 'sendToolResults' && sent.results[0]!.output).toMatch(
            /^interrupted: the run was cut off/,
          );
          expect(run.resume).toMatchObject({ recordedCalls: 1, interruptedTools: 1, rerunTools: 0 });
        } else {
          expect(ran).toBe(true);
          expect(sent?.op === 'sendToolResults' && sent.results[0]!.output).toBe('read again');
          expect(run.resume).toMatchObject({ recordedCalls: 1, interruptedTools: 0, rerunTools: 1 });
        }
      } finally {
        letGo.reached();
        await Promise.all(workers.map((w) => w.close()));
        await store.close();
        redis.disconnect();
        await deletePrefix(url, prefix);
      }
    },
    60_000,
  );

  it('is checked as the worker starts, and refused by name on the producer', async () => {
    const base = { connection: 'redis://127.0.0.1:1', name: 'q', agent: () => createScriptedAgent({ replies: [] }) };
    expect(() => startBatchWorker({ ...base, resumeTools: { default: 'replay' } as never })).toThrow(
      "Expected `resumeTools.default` to be 'serve' or 'rerun' ('replay' is now 'serve'), got `replay` (string)",
    );
    // With no store, or no journal, a taken-over run restarts: nothing would follow the policy.
    expect(() => startBatchWorker({ ...base, resumeTools: { rerun: ['read'] } })).toThrow(
      'Expected `resumeTools` to be left out unless `store` and `journal` are set',
    );
    await expect(
      submitBatch([], { connection: 'redis://127.0.0.1:1', name: 'q', resumeTools: { rerun: ['read'] } } as never),
    ).rejects.toThrow(/`resumeTools`.*give the policy to startBatchWorker\(\)/);
  });
});

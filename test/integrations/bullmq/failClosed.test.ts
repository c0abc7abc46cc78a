import { spawn } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { Redis } from 'ioredis';
import { createScriptedAgent } from 'agent-state-machine';
import {
  RedisUnreachableError,
  startBatchWorker,
  submitBatch,
  type BatchWorkerHandle,
  type DistributedTask,
} from '../../../lib/integrations/bullmq/index';
import { freePort, startOwnRedis, type OwnRedis } from '../../helpers/redis';
import { gatedAgents, llmCalls } from './fixtures/gatedAgent';

// Each test has a redis-server of its own (no persistence), which it kills or restarts at a
// moment it controls: when every run is inside its first LLM call, held at a gate.
let redis: OwnRedis | undefined;
const workers: BatchWorkerHandle[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
  await redis?.stop();
  redis = undefined;
}, 20_000);

const tasks = (n: number): DistributedTask[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t${i}`, input: `task ${i}` }));

async function asmKeys(url: string): Promise<string[]> {
  const client = new Redis(url);
  try {
    return await client.keys('*:asm:*');
  } finally {
    client.disconnect();
  }
}

describe('distributed batches fail closed', () => {
  it('an unpriced worker under the batch dollar cap: each run ends at its first response of unknown cost, saying why', async () => {
    redis = await startOwnRedis();
    const unpriced = () =>
      createScriptedAgent({
        replies: [
          { toolCalls: [{ id: 'c', name: 'work', input: {} }], usage: { inputTokens: 100, outputTokens: 10 } },
          { text: 'done', usage: { inputTokens: 100, outputTokens: 10 } },
        ],
        tools: { work: { output: 'ok' } },
      });
    workers.push(startBatchWorker({ connection: redis.url, name: 'q', agent: unpriced, onError: false }));
    const report = await (
      await submitBatch(tasks(6), { connection: redis.url, name: 'q', total: { maxCostUsd: 1, strict: false } })
    ).report();
    expect(report.totals.outcomes.error).toBe(6);
    expect(report.totals.llmCalls).toBe(6);
    for (const run of report.runs)
      expect(run.error?.message).toMatch(
        /no costUsd for model .* and no pricing option is set: maxCostUsd cannot be enforced/,
      );
  }, 30_000);

  it('an unpriced worker under a strict dollar cap makes no call at all', async () => {
    redis = await startOwnRedis();
    const agents: ReturnType<typeof createScriptedAgent>[] = [];
    const unpriced = () => {
      const agent = createScriptedAgent({ replies: [{ text: 'done', usage: { inputTokens: 100, outputTokens: 10 } }] });
      agents.push(agent);
      return agent;
    };
    workers.push(startBatchWorker({ connection: redis.url, name: 'q', agent: unpriced, onError: false }));
    const report = await (
      await submitBatch(tasks(4), { connection: redis.url, name: 'q', total: { maxCostUsd: 1, strict: true } })
    ).report();
    expect(report.totals.outcomes.error).toBe(4);
    expect(agents.map(llmCalls)).toEqual([0, 0, 0, 0]);
    expect(report.budget.llmCalls).toBe(0);
    for (const run of report.runs) expect(run.error?.message).toMatch(/strict/);
  }, 30_000);

  it('Redis restarted without persistence: runs in flight make no further call, the workers recreate no key, report() says the batch is gone', async () => {
    redis = await startOwnRedis();
    const gated = gatedAgents({ steps: 3 });
    const errors: string[] = [];
    workers.push(
      startBatchWorker({
        connection: redis.url,
        name: 'q',
        concurrency: 2,
        agent: gated.agent,
        onError: (e) => errors.push(e.message),
      }),
    );
    const batch = await submitBatch(tasks(2), {
      connection: redis.url,
      name: 'q',
      total: { maxCostUsd: 10, strict: false },
    });
    await gated.arrived(2);
    await redis.kill();
    await redis.start();
    gated.open();
    await expect(batch.report()).rejects.toThrow(/its keys are gone from Redis/);
    // Each run finishes the call it was in, then asks the budget for its next one: refused.
    while (workers[0]!.running > 0) await new Promise((r) => setTimeout(r, 20));
    expect(gated.agents.map(llmCalls)).toEqual([1, 1]);
    expect(errors.filter((m) => /the batch is gone from Redis/.test(m))).toHaveLength(2);
    expect(await asmKeys(redis.url)).toEqual([]);
  }, 30_000);

  it('Redis gone for good: runs in flight make no further call and end within redisTimeoutMs; close() and report() end within their bounds, naming the address', async () => {
    redis = await startOwnRedis();
    const gated = gatedAgents({ steps: 3 });
    const errors: string[] = [];
    const worker = startBatchWorker({
      connection: redis.url,
      name: 'q',
      concurrency: 2,
      agent: gated.agent,
      redisTimeoutMs: 300,
      closeTimeoutMs: 1000,
      onError: (e) => errors.push(e.message),
    });
    workers.push(worker);
    const batch = await submitBatch(tasks(2), {
      connection: redis.url,
      name: 'q',
      total: { maxCostUsd: 10, strict: false },
      timeoutMs: 300,
    });
    await gated.arrived(2);
    await redis.kill();
    gated.open();
    const reported = batch.report();
    await expect(reported).rejects.toThrow(RedisUnreachableError);
    await expect(reported).rejects.toThrow(
      new RegExp(
        `^Redis at 127\\.0\\.0\\.1:${redis.port} unreachable: batch .*: reading progress had no answer for \\d+ ms`,
      ),
    );
    while (worker.running > 0) await new Promise((r) => setTimeout(r, 20));
    expect(gated.agents.map(llmCalls)).toEqual([1, 1]);
    // The runs' reports could not be written: said, with the address.
    expect(errors).toContainEqual(expect.stringContaining(`Redis at 127.0.0.1:${redis.port} unreachable`));
    const closing = Date.now();
    await worker.close();
    // close() is bounded by closeTimeoutMs + 4 s, whatever Redis does.
    expect(Date.now() - closing).toBeLessThan(1000 + 4000);
  }, 30_000);

  it('Redis unreachable from the start: submitBatch rejects naming the address and the wait (or at once on abort), the worker says so through ready', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    await expect(submitBatch(tasks(2), { connection: url, name: 'q', timeoutMs: 300 })).rejects.toThrow(
      new RegExp(
        `^Redis at 127\\.0\\.0\\.1:${port} unreachable: submitBatch: creating the batch had no answer for \\d+ ms`,
      ),
    );
    const controller = new AbortController();
    const submitting = submitBatch(tasks(2), { connection: url, name: 'q', signal: controller.signal });
    controller.abort(new Error('given up'));
    await expect(submitting).rejects.toThrow('given up');
    const errors: string[] = [];
    const worker = startBatchWorker({
      connection: url,
      name: 'q',
      agent: () => createScriptedAgent({ replies: [] }),
      redisTimeoutMs: 300,
      closeTimeoutMs: 500,
      onError: (e) => errors.push(e.message),
    });
    await expect(worker.ready).rejects.toThrow(
      new RegExp(`Redis at 127\\.0\\.0\\.1:${port} unreachable: worker .*: connecting`),
    );
    expect(errors[0]).toMatch(/unreachable/);
    const closing = Date.now();
    await worker.close();
    expect(Date.now() - closing).toBeLessThan(500 + 4000);
  }, 30_000);

  it('a worker process given SIGTERM with Redis gone and a run in flight exits within closeTimeoutMs + 4 s', async () => {
    redis = await startOwnRedis();
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures/workerProcess.ts')], {
      cwd: path.resolve(__dirname, '../../..'),
      env: {
        ...process.env,
        REDIS_URL: redis.url,
        QUEUE: 'q',
        WORKER_ID: 'term',
        REDIS_TIMEOUT_MS: '300',
        CLOSE_TIMEOUT_MS: '1000',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const lines = readline.createInterface({ input: child.stdout! });
      const next = (pattern: RegExp): Promise<string> =>
        new Promise((resolve) => {
          const onLine = (line: string): void => {
            if (!pattern.test(line)) return;
            lines.off('line', onLine);
            resolve(line);
          };
          lines.on('line', onLine);
        });
      await next(/^ready$/);
      const holding = next(/^holding /);
      child.stdin!.write('hold\n');
      const batch = await submitBatch(tasks(1), { connection: redis.url, name: 'q', timeoutMs: 300 });
      await holding;
      await redis.kill();
      await expect(batch.report()).rejects.toThrow(RedisUnreachableError);
      const terminated = Date.now();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(Date.now() - terminated).toBeLessThan(1000 + 4000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
  }, 30_000);
});

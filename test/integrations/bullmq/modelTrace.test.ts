// The code held to its model (lib/integrations/bullmq/model/budget.pml): a real batch on three
// worker processes under a strict cap, one of them killed with a run in flight and that run
// taken over (retryLostRuns: 1, no store: the earlier attempt written off). Every budget script
// Redis ran for the batch is recorded in the order Redis ran it (MONITOR) and replayed through
// the model's step relation (test/helpers/budgetTrace.ts): each step is one the model's worker
// takes there, the cap is never passed, nothing is held at the end, each run reported once —
// and the replay ends where Redis did.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { Redis } from 'ioredis';
import { batchKeys } from '../../../lib/integrations/bullmq/batchKeys';
import { submitBatch, type DistributedTask, type PriceTable } from '../../../lib/integrations/bullmq/index';
import { replayTrace, tracedScript, type TracedScript } from '../../helpers/budgetTrace';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';
import { monitorRedis } from '../../helpers/redisMonitor';
import type { TestPayload } from './fixtures/agentFromPayload';

const root = path.resolve(__dirname, '../../..');
const LOCK_MS = 3000;
const STALL_MS = 1000;

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

// Prices of 1/1024 and 4/1024 dollars a token: every cost, hold and sum is exact in binary.
const PRICES: PriceTable = { '*': { inputPerMTok: 1e6 / 1024, outputPerMTok: 4e6 / 1024 } };

/** A worker process (fixtures/workerProcess.ts); `holdNextRun` makes its next run hang once begun, and resolves then. */
function spawnWorker(env: Record<string, string>): Promise<{ child: ChildProcess; holdNextRun(): Promise<string> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures/workerProcess.ts')], {
    cwd: root,
    env: { ...process.env, LOCK_MS: String(LOCK_MS), STALL_MS: String(STALL_MS), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const holding: Array<(taskId: string) => void> = [];
  const holdNextRun = (): Promise<string> =>
    new Promise((resolve) => {
      holding.push(resolve);
      child.stdin!.write('hold\n');
    });
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'ready') resolve({ child, holdNextRun });
      const held = /^holding (.+)$/.exec(line);
      if (held) holding.shift()?.(held[1]!);
    });
    child.once('exit', (code) =>
      reject(new Error(`worker ${env.WORKER_ID} exited (${code}) before it was ready: ${err}`)),
    );
  });
}

describe('a real batch, replayed through the money model', () => {
  it('three workers, one killed with runs in flight: every budget script Redis ran is a step the model allows', async () => {
    const prefix = uniquePrefix('modeltrace');
    const workers: Array<{ child: ChildProcess; holdNextRun(): Promise<string> }> = [];
    const redis = new Redis(url);
    const commands: string[][] = [];
    const monitor = await monitorRedis(url, (args) => commands.push(args));
    try {
      const env = { REDIS_URL: url, QUEUE: 'runs', PREFIX: prefix, CONCURRENCY: '2' };
      workers.push(...(await Promise.all(['m1', 'm2', 'm3'].map((id) => spawnWorker({ ...env, WORKER_ID: id })))));
      // 12 tasks of two calls, each holding $0.29 and costing $0.13–$0.29.
      const tasks: DistributedTask[] = Array.from({ length: 12 }, (_, i) => {
        const payload: TestPayload = {
          steps: 2,
          delayMs: 30,
          tokens: { inputTokens: 100, maxOutputTokens: 50, outputTokens: [10 + ((i * 7) % 41), 10 + ((i * 13) % 41)] },
        };
        return { id: `task-${i}`, input: `task ${i}`, payload };
      });
      // Enough for every task: the retried run must not find the cap spent (the trace would hold no takeover).
      const cap = 8;
      // m1's first run hangs once begun, and m1 is killed then, its other slot busy with calls.
      const killed = workers[0]!.holdNextRun().then((taskId) => {
        workers[0]!.child.kill('SIGKILL');
        return taskId;
      });
      const batch = await submitBatch(tasks, {
        connection: url,
        name: 'runs',
        prefix,
        pricing: PRICES,
        retryLostRuns: 1,
        total: { maxCostUsd: cap, strict: true },
      });
      const report = await batch.report();
      const heldTask = await killed;
      expect(report.runs.find((r) => r.id === heldTask)).toMatchObject({ attempt: 2 });

      // The trace: the batch's budget scripts in the order Redis ran them.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const keys = batchKeys(prefix, 'runs', batch.batchId);
      const trace = commands
        .map((args) => tracedScript(args, keys.budget))
        .filter((t): t is TracedScript => t !== undefined);
      expect(trace.filter((t) => t.script === 'begin').length).toBeGreaterThanOrEqual(tasks.length + 1);

      const replay = replayTrace(trace, cap, 1);
      expect(replay.violations).toEqual([]);
      // The held run was taken over by writing its first attempt off (no store), then run again.
      expect(replay.writeOffs).toBeGreaterThanOrEqual(1);
      expect(replay.reservations).toBeGreaterThan(0);
      expect([...replay.reports.keys()].sort()).toEqual(tasks.map((_, i) => String(i)).sort());
      // The replay ends where Redis did: what is spent, and nothing held.
      const [spent, held] = await redis.hmget(keys.budget, 'c', 'hc');
      expect(replay.spent).toBeCloseTo(Number(spent ?? 0), 9);
      expect(Number(held ?? 0)).toBeCloseTo(0, 9);
      expect(replay.spent).toBeLessThanOrEqual(cap);
      expect(report.budget.costUsd).toBeCloseTo(replay.spent, 9);
    } finally {
      monitor.stop();
      redis.disconnect();
      await Promise.all(
        workers.map(({ child }) => {
          if (child.exitCode !== null || child.signalCode !== null) return undefined;
          const gone = new Promise((r) => child.once('exit', r));
          child.kill('SIGKILL');
          return gone;
        }),
      );
      await deletePrefix(url, prefix);
    }
  }, 90_000);
});

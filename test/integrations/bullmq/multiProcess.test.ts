import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { RunSkippedError } from 'agent-state-machine';
import { submitBatch, WorkerLostError, type DistributedTask } from '../../../lib/integrations/bullmq/index';
import { deletePrefix, releaseRedis, testRedisUrl, uniquePrefix } from '../../helpers/redis';

const root = path.resolve(__dirname, '../../..');
const LOCK_MS = 4000;
const STALL_MS = 1000;

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

/** A worker in its own process (`node --import tsx`), resolved once it listens. */
interface WorkerProcess {
  child: ChildProcess;
  /**
   * Makes the next run this worker starts hang, and resolves with its task id once that run is
   * started in Redis: from then on the worker has that run in flight until it is killed.
   */
  holdNextRun(): Promise<string>;
}

function spawnWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures/workerProcess.ts')], {
    cwd: root,
    env: { ...process.env, LOCK_MS: String(LOCK_MS), STALL_MS: String(STALL_MS), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const lines = readline.createInterface({ input: child.stdout! });
  const holding: Array<(taskId: string) => void> = [];
  const holdNextRun = (): Promise<string> =>
    new Promise((resolve) => {
      holding.push(resolve);
      child.stdin!.write('hold\n');
    });
  return new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      if (line === 'ready') resolve({ child, holdNextRun });
      const held = /^holding (.+)$/.exec(line);
      if (held) holding.shift()?.(held[1]!);
    });
    child.once('exit', (code) =>
      reject(new Error(`worker ${env.WORKER_ID} exited (${code}) before it was ready: ${err}`)),
    );
  });
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map((c) => {
      if (c.exitCode !== null || c.signalCode !== null) return undefined;
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      return gone;
    }),
  );
}

const tasks = (n: number, payload: object): DistributedTask[] =>
  Array.from({ length: n }, (_, i) => ({ id: `task-${i}`, input: `task ${i}`, payload }));

describe('submitBatch() across worker processes', () => {
  it('three workers, 300 tasks, a dollar cap running out part-way, one worker SIGKILLed: each task reported once, spend within the bound, the lost runs named', async () => {
    const prefix = uniquePrefix('multi');
    const historyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-multi-'));
    const workers: WorkerProcess[] = [];
    try {
      const env = { REDIS_URL: url, QUEUE: 'runs', PREFIX: prefix, CONCURRENCY: '4', HISTORY_DIR: historyDir };
      workers.push(...(await Promise.all(['w1', 'w2', 'w3'].map((id) => spawnWorker({ ...env, WORKER_ID: id })))));
      const cost = 0.01;
      const cap = 3;
      let held: Promise<string> | undefined;
      let killedAt: number | undefined;
      let lostSeenAt: number | undefined;
      const batch = await submitBatch(tasks(300, { steps: 2, costUsd: cost, delayMs: 40 }), {
        connection: url,
        name: 'runs',
        prefix,
        total: { maxCostUsd: cap, strict: false },
        onProgress: (p) => {
          // Part-way, w1 is killed while it has a run in flight for sure: the one it is told to hold.
          if (held === undefined && p.done >= 30) {
            held = workers[0]!.holdNextRun().then((taskId) => {
              killedAt = Date.now();
              workers[0]!.child.kill('SIGKILL');
              return taskId;
            });
          }
          if (p.event.type === 'finished' && p.event.run.error instanceof WorkerLostError) lostSeenAt ??= Date.now();
        },
      });
      const report = await batch.report();
      // The batch could not end without w1's held run reported, so w1 was killed with it in flight.
      expect(killedAt).toBeDefined();
      const heldTask = await held!;

      // Every task exactly once, in task order.
      expect(report.runs.map((r) => r.id)).toEqual(tasks(300, {}).map((t) => t.id));
      const counted = Object.values(report.totals.outcomes).reduce((a, b) => a + b, 0);
      expect(counted).toBe(300);
      // Nothing ran twice: no run was started more than once, and each started run has its one history file.
      expect(report.runs.every((r) => r.attempt === undefined || r.attempt === 1)).toBe(true);
      // (A lost run may have died before opening its file.)
      const started = report.runs.filter((r) => r.outcome !== 'skipped');
      const finished = started.filter((r) => !(r.error instanceof WorkerLostError));
      const files = fs.readdirSync(path.join(historyDir, report.batchId));
      // Named on failure: which run, how it ended and why.
      const missing = finished.filter((r) => r.historyFile === undefined || !fs.existsSync(r.historyFile));
      expect(missing.map((r) => `${r.id}: ${r.outcome} ${r.error?.message ?? ''}`)).toEqual([]);
      expect(files.length).toBeGreaterThanOrEqual(finished.length);
      expect(files.length).toBeLessThanOrEqual(started.length);

      // The killed worker's runs in flight: reported lost, by name, within the stated bound.
      const lost = report.runs.filter((r) => r.error instanceof WorkerLostError);
      expect(lost.length).toBeGreaterThanOrEqual(1);
      expect(lost.length).toBeLessThanOrEqual(4);
      expect(lost.map((r) => r.id)).toContain(heldTask);
      for (const run of lost) {
        expect(run).toMatchObject({ outcome: 'error', worker: 'w1' });
        expect(run.error!.message).toMatch(/^worker lost: w1/);
      }
      expect(lostSeenAt! - killedAt!).toBeLessThan(LOCK_MS + 2 * STALL_MS + 3000);

      // The dollar cap: reached, passed by at most one response per run in flight in the cluster (12 slots).
      expect(report.budget.costUsd).toBeGreaterThanOrEqual(cap);
      expect(report.budget.costUsd).toBeLessThanOrEqual(cap + 12 * cost + 1e-9);
      expect(report.totals.costUsd).toBeCloseTo(report.budget.costUsd, 9);
      expect(report.stopped?.reason).toBe('budget_exceeded');
      expect(report.totals.outcomes.skipped).toBeGreaterThan(0);
      expect(report.runs.filter((r) => r.outcome === 'skipped').every((r) => r.error instanceof RunSkippedError)).toBe(
        true,
      );
      expect(new Set(Object.keys(report.workers))).toEqual(new Set(['w1', 'w2', 'w3']));
    } finally {
      await stopAll(workers.map((w) => w.child));
      await deletePrefix(url, prefix);
      fs.rmSync(historyDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('retryLostRuns: 1 runs a lost run again on another worker, once', async () => {
    const prefix = uniquePrefix('retry');
    const workers: WorkerProcess[] = [];
    try {
      const env = { REDIS_URL: url, QUEUE: 'runs', PREFIX: prefix, CONCURRENCY: '2' };
      workers.push(...(await Promise.all(['r1', 'r2'].map((id) => spawnWorker({ ...env, WORKER_ID: id })))));
      let held: Promise<string> | undefined;
      let killed = false;
      const batch = await submitBatch(tasks(30, { steps: 2, delayMs: 40 }), {
        connection: url,
        name: 'runs',
        prefix,
        retryLostRuns: 1,
        onProgress: (p) => {
          // r1 is killed while it has a run in flight for sure: the one it is told to hold.
          if (held === undefined && p.done >= 5) {
            held = workers[0]!.holdNextRun().then((taskId) => {
              killed = true;
              workers[0]!.child.kill('SIGKILL');
              return taskId;
            });
          }
        },
      });
      const report = await batch.report();
      // The batch could not end without r1's held run run again, so r1 was killed with it in flight.
      expect(killed).toBe(true);
      const heldTask = await held!;
      expect(report.runs).toHaveLength(30);
      expect(report.totals.outcomes.end_of_turn).toBe(30);
      const rerun = report.runs.filter((r) => r.attempt === 2);
      expect(rerun.length).toBeGreaterThanOrEqual(1);
      for (const run of rerun) expect(run.worker).toBe('r2');
      expect(rerun.map((r) => r.id)).toContain(heldTask);
    } finally {
      await stopAll(workers.map((w) => w.child));
      await deletePrefix(url, prefix);
    }
  }, 60_000);
});

// Distributed batches (agent-state-machine/bullmq) beside the in-process runBatch. Every target
// is a ratio to a floor measured in the same run (or a count), never an absolute time.
//
//  - zero-latency agents (scripted replies and tools resolving at once: 2 LLM calls and 1 tool
//    call per run), so that what is measured is the batch machinery and Redis: runs/s of
//    in-process runBatch (concurrency 16) and of submitBatch with 1, 2 and 4 worker processes
//    (`node --import tsx`, concurrency 8 each), every run checking and charging a shared
//    `total` budget in Redis; Redis commands per LLM call (INFO stats, BullMQ's queue work
//    included). A batch's duration is from submitBatch to the report.
//  - budget round trips per LLM call, runs of 2 LLM calls: the budget's own script (step:
//    reserve and charge in one), counted with MONITOR in a separate batch per worker count.
//    A count: target ≤ 1.5 (one step per call, one per run to settle the last charge).
//  - added latency per budget check: one RedisBudget.reserve() (one EVALSHA round trip),
//    timed back to back, beside the in-process Budget.spent() it stands in for (printed only).
//  - latency-bound agents (each LLM call sleeps 50 ms): runs/s with 1, 2 and 4 worker
//    processes of concurrency 8 each, and in-process runBatch with the same total concurrency
//    (8, 16, 32), the four timed round by round so that each ratio pairs samples taken side by
//    side. Targets: 4 workers ≥ 1.8× one worker (the work waits, it does not compute: these
//    machines have 2 cores); each worker count ≥ 0.5× in-process at the same concurrency (4
//    worker processes, Redis and the producer share the 2 cores).
//  - skipped runs: a batch of BENCH_SKIP_TASKS (20,000) whose budget is spent by its first
//    call: time from submit to report, as a ratio to the time the same tasks take to queue.
//
// Redis is a redis-server of the suite's own on a free port (nothing else talks to it), so the
// command counts are this suite's alone. The worker processes are started once, together. The
// machine may be shared: run it twice and compare. `--quick` (BENCH_QUICK=1): fewer tasks and rounds.
//
//   npx tsx bench/distributed.bench.ts            alone
//   npm run bench -- distributed                  through the runner
//   BENCH_TASKS=2000 BENCH_ROUNDS=5 npx tsx bench/distributed.bench.ts
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Budget, createScriptedAgent, runBatch, type AgentLoop } from '../lib/index';
import { RedisBudget, submitBatch } from '../lib/integrations/bullmq/index';
import { batchKeys } from '../lib/integrations/bullmq/batchKeys';
import { STEP } from '../lib/integrations/bullmq/scripts';
import { startOwnRedis, type OwnRedis } from '../test/helpers/redis';
import { agentFromPayload } from '../test/integrations/bullmq/fixtures/agentFromPayload';
import {
  failed,
  formatTable,
  median,
  printSuite,
  ratioFigure,
  ratioTarget,
  ROOT,
  scaled,
  type ResultRow,
  type SuiteResult,
} from './harness';

const TASKS = Number(process.env.BENCH_TASKS ?? scaled(1000, 120));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? scaled(3, 2));
const MONITORED_TASKS = scaled(200, 40);
const LATENCY_MS = 50;
const LATENCY_TASKS = Number(process.env.BENCH_LATENCY_TASKS ?? scaled(320, 96));
const LATENCY_ROUNDS = scaled(5, 2);
const SKIP_TASKS = Number(process.env.BENCH_SKIP_TASKS ?? scaled(20_000, 1000));
const WORKER_CONCURRENCY = 8;
const WORKER_COUNTS = [1, 2, 4] as const;
const WORKER = path.join(ROOT, 'test/integrations/bullmq/fixtures/workerProcess.ts');
const NO_CAP = { maxCostUsd: 1e9, strict: false };

function zeroLatencyAgent(): AgentLoop {
  return createScriptedAgent({
    replies: [
      { toolCalls: [{ id: 'c', name: 'work' }], usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.001 } },
      { text: 'done', usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.001 } },
    ],
    tools: { work: { output: 'ok' } },
  });
}

const spread = (xs: number[], digits = 0): string =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

/** `workers` worker processes on queue `queue`, resolved once all listen. */
function startWorkers(redis: OwnRedis, count: number, queue: string, concurrency: number): Promise<ChildProcess[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
        cwd: ROOT,
        env: {
          ...process.env,
          REDIS_URL: redis.url,
          QUEUE: queue,
          WORKER_ID: `${queue}-${i}`,
          CONCURRENCY: String(concurrency),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      return new Promise<ChildProcess>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(child));
        child.once('exit', (code) => reject(new Error(`bench worker exited (${code})`)));
      });
    }),
  );
}

async function stop(children: ChildProcess[]): Promise<void> {
  await Promise.all(children.map((c) => new Promise((r) => (c.once('exit', r), c.kill('SIGKILL')))));
}

const queueOf = (workers: number): string => `bench${workers}`;

/** Runs a distributed batch on the queue of `workers` workers; throws unless every run ended its turn. */
async function distributedBatch(redis: OwnRedis, workers: number, tasks: object[]): Promise<number> {
  const start = performance.now();
  const report = await (
    await submitBatch(tasks as never, { connection: redis.url, name: queueOf(workers), total: NO_CAP })
  ).report();
  const seconds = (performance.now() - start) / 1000;
  if (report.totals.outcomes.end_of_turn !== tasks.length)
    throw new Error(`bench batch: ${JSON.stringify(report.totals.outcomes)}`);
  return seconds;
}

async function inProcess(): Promise<number[]> {
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const tasks = Array.from({ length: TASKS }, (_, i) => ({ id: `t${i}`, input: 'go', agent: zeroLatencyAgent }));
    const start = performance.now();
    const report = await runBatch(tasks, { concurrency: 16, total: NO_CAP, logger: false });
    rates.push(report.runs.length / ((performance.now() - start) / 1000));
  }
  return rates;
}

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/**
 * Counts, with MONITOR, the budget's own script (step: reserve and charge) per LLM call in one
 * batch of runs of 2 LLM calls. Not in the timed rounds: MONITOR slows Redis down.
 */
async function budgetRoundTrips(redis: OwnRedis, workers: number): Promise<number> {
  const client = new Redis(redis.url);
  const monitor = await client.monitor();
  const step = sha1(STEP);
  let count = 0;
  monitor.on('monitor', (_time: string, args: string[]) => {
    const command = args[0]?.toLowerCase();
    if ((command === 'evalsha' && args[1] === step) || (command === 'eval' && args[1] === STEP)) count += 1;
  });
  const tasks = Array.from({ length: MONITORED_TASKS }, (_, i) => ({
    id: `m${i}`,
    input: 'go',
    payload: { steps: 2, costUsd: 0.001 },
  }));
  const report = await (
    await submitBatch(tasks, { connection: redis.url, name: queueOf(workers), total: NO_CAP })
  ).report();
  // MONITOR's stream may trail the replies: an ECHO through it marks the end.
  await new Promise<void>((resolve) => {
    monitor.on('monitor', (_t: string, args: string[]) => args[0]?.toLowerCase() === 'echo' && resolve());
    void client.echo('end of count');
  });
  monitor.disconnect();
  client.disconnect();
  return count / report.totals.llmCalls;
}

interface ZeroLatency {
  rates: number[];
  commandsPerLlmCall: number[];
}

async function zeroLatency(redis: OwnRedis, workers: number): Promise<ZeroLatency> {
  const admin = new Redis(redis.url);
  const out: ZeroLatency = { rates: [], commandsPerLlmCall: [] };
  try {
    // One small batch first, so every worker has loaded its scripts and warmed up.
    await distributedBatch(
      redis,
      workers,
      Array.from({ length: 50 }, (_, i) => ({ id: `w${i}`, input: 'go' })),
    );
    for (let r = 0; r < ROUNDS; r++) {
      await admin.config('RESETSTAT');
      const tasks = Array.from({ length: TASKS }, (_, i) => ({
        id: `t${i}`,
        input: 'go',
        payload: { steps: 2, costUsd: 0.001 },
      }));
      const seconds = await distributedBatch(redis, workers, tasks);
      const info = await admin.info('stats');
      const commands = Number(/total_commands_processed:(\d+)/.exec(info)![1]);
      out.rates.push(TASKS / seconds);
      // Each run makes 2 LLM calls.
      out.commandsPerLlmCall.push(commands / (2 * TASKS));
    }
  } finally {
    admin.disconnect();
  }
  return out;
}

async function budgetCheck(redis: OwnRedis): Promise<{ redisUs: number[]; localNs: number }> {
  const client = new Redis(redis.url);
  const keys = batchKeys('benchbudget', 'q', 'b');
  await client.hset(keys.budget, { st: Date.now(), mc: 1e9 });
  const budget = new RedisBudget(client, keys, NO_CAP, 0);
  const samples: number[] = [];
  for (let i = 0; i < 200; i++) await budget.reserve('llm');
  for (let r = 0; r < ROUNDS; r++) {
    const n = scaled(2000, 500);
    const start = performance.now();
    for (let i = 0; i < n; i++) await budget.reserve('llm');
    samples.push(((performance.now() - start) * 1000) / n);
  }
  client.disconnect();
  const local = new Budget(NO_CAP);
  const n = 1_000_000;
  const start = performance.now();
  for (let i = 0; i < n; i++) local.spent();
  return { redisUs: samples, localNs: ((performance.now() - start) * 1e6) / n };
}

/** Runs/s per round on latency-bound agents: distributed with each worker count, and in process at the same total concurrency. */
interface LatencyBound {
  distributed: Record<number, number[]>;
  local: Record<number, number[]>;
}

/**
 * Round by round, for each worker count: in-process runBatch at the same total concurrency,
 * then the distributed batch, so that the samples of one round are taken side by side.
 */
async function latencyBound(redis: OwnRedis): Promise<LatencyBound> {
  const payload = { steps: 2, costUsd: 0.001, delayMs: LATENCY_MS };
  const tasks = Array.from({ length: LATENCY_TASKS }, (_, i) => ({ id: `l${i}`, input: 'go', payload }));
  const out: LatencyBound = { distributed: {}, local: {} };
  for (const workers of WORKER_COUNTS) {
    out.distributed[workers] = [];
    out.local[workers] = [];
  }
  for (let r = 0; r < LATENCY_ROUNDS; r++) {
    for (const workers of WORKER_COUNTS) {
      const start = performance.now();
      await runBatch(
        tasks.map((t) => ({ id: t.id, input: t.input, agent: () => agentFromPayload(t.payload) })),
        { concurrency: workers * WORKER_CONCURRENCY, total: NO_CAP, logger: false },
      );
      out.local[workers]!.push(LATENCY_TASKS / ((performance.now() - start) / 1000));
      out.distributed[workers]!.push(LATENCY_TASKS / (await distributedBatch(redis, workers, tasks)));
    }
  }
  return out;
}

/** Seconds from submit to report for a batch whose budget is spent at once, and seconds to queue the same tasks alone. */
async function skipping(redis: OwnRedis): Promise<{ report: number[]; queue: number[] }> {
  const out = { report: [] as number[], queue: [] as number[] };
  const { Queue } = await import('bullmq');
  for (let r = 0; r < ROUNDS; r++) {
    const tasks = Array.from({ length: SKIP_TASKS }, (_, i) => ({ id: `s${i}`, input: 'go', payload: { steps: 2 } }));
    let start = performance.now();
    const report = await (
      await submitBatch(tasks, { connection: redis.url, name: 'skip', total: { maxLlmCalls: 1 } })
    ).report();
    out.report.push((performance.now() - start) / 1000);
    if (report.totals.outcomes.skipped < SKIP_TASKS - 10) throw new Error('bench skip batch: not skipped');
    // The floor: the same tasks queued alone (and removed).
    const queue = new Queue('floor', { connection: { url: redis.url } as never, prefix: 'floor' });
    start = performance.now();
    for (let from = 0; from < SKIP_TASKS; from += 1000)
      await queue.addBulk(
        tasks.slice(from, from + 1000).map((t, k) => ({ name: 'run', data: t, opts: { jobId: `f${r}-${from + k}` } })),
      );
    out.queue.push((performance.now() - start) / 1000);
    await queue.obliterate({ force: true });
    await queue.close();
  }
  return out;
}

const plural = (workers: number): string => `${workers} worker process${workers === 1 ? '' : 'es'}`;

export async function run(): Promise<SuiteResult> {
  const redis = await startOwnRedis();
  const children: ChildProcess[] = [];
  try {
    // Every worker process at once (1, 2 and 4 on queues of their own, 1 for the skip batch):
    // a worker on another queue waits on Redis and takes no CPU.
    const sets = await Promise.all([
      ...WORKER_COUNTS.map((workers) => startWorkers(redis, workers, queueOf(workers), WORKER_CONCURRENCY)),
      startWorkers(redis, 1, 'skip', 2),
    ]);
    children.push(...sets.flat());

    console.log(
      `distributed batches: ${TASKS} zero-latency runs per batch (2 LLM calls, 1 tool call each), ${ROUNDS} rounds; median (min–max)\n`,
    );
    const local = await inProcess();
    const zeroRows: string[][] = [['in-process runBatch, concurrency 16', spread(local), '—', '—']];
    const roundTrips: number[] = [];
    for (const workers of WORKER_COUNTS) {
      const d = await zeroLatency(redis, workers);
      const trips = await budgetRoundTrips(redis, workers);
      roundTrips.push(trips);
      zeroRows.push([
        `submitBatch, ${plural(workers)} × concurrency ${WORKER_CONCURRENCY}`,
        spread(d.rates),
        spread(d.commandsPerLlmCall, 1),
        trips.toFixed(2),
      ]);
    }
    console.log(
      formatTable(
        ['batch', 'runs/s', 'Redis commands per LLM call (all)', 'budget round trips per LLM call (MONITOR)'],
        zeroRows,
      ),
    );
    const check = await budgetCheck(redis);
    console.log(
      `\nadded latency per budget check: RedisBudget.reserve() ${spread(check.redisUs, 1)} µs per call, back to back on loopback; in-process Budget.spent() ${check.localNs.toFixed(0)} ns`,
    );

    console.log(
      `\nlatency-bound agents: ${LATENCY_TASKS} runs of 2 LLM calls sleeping ${LATENCY_MS} ms each, ${LATENCY_ROUNDS} rounds; worker processes of concurrency ${WORKER_CONCURRENCY}\n`,
    );
    const l = await latencyBound(redis);
    const one = l.distributed[1]!;
    const latencyRows: string[][] = WORKER_COUNTS.map((workers) => [
      `${plural(workers)} (total concurrency ${workers * WORKER_CONCURRENCY})`,
      spread(l.distributed[workers]!),
      spread(l.local[workers]!),
      spread(
        l.distributed[workers]!.map((d, i) => d / l.local[workers]![i]!),
        2,
      ),
      spread(
        l.distributed[workers]!.map((d, i) => d / one[i]!),
        2,
      ),
    ]);
    console.log(
      formatTable(
        [
          'distributed',
          'runs/s',
          'in-process runBatch, same concurrency: runs/s',
          'ratio to in-process',
          'growth over 1 worker',
        ],
        latencyRows,
      ),
    );

    const skip = await skipping(redis);
    const skipRatios = skip.report.map((x, i) => x / skip.queue[i]!);
    console.log(
      `\nskipped runs: ${SKIP_TASKS} tasks, the budget spent by the first call: submit to report ${spread(skip.report, 2)} s; ` +
        `${spread(skipRatios, 2)} × the time to queue the same tasks alone (${spread(skip.queue, 2)} s)\n`,
    );

    const growth = ratioFigure(l.distributed[4]!.map((d, i) => d / one[i]!));
    const vsLocal = WORKER_COUNTS.map((workers) =>
      ratioFigure(l.distributed[workers]!.map((d, i) => d / l.local[workers]![i]!)),
    );
    const rows: ResultRow[] = [
      {
        label: 'budget round trips per LLM call (runs of 2 calls; 1, 2, 4 workers)',
        cells: [roundTrips.map((t) => t.toFixed(2)).join(', ')],
      },
      ...WORKER_COUNTS.map((workers) => ({
        label: `latency-bound runs/s, ${plural(workers)}`,
        cells: [spread(l.distributed[workers]!)],
      })),
      { label: 'skipped runs: submit to report / queueing alone', cells: [spread(skipRatios, 2)] },
    ];
    return {
      suite: 'distributed',
      columns: ['median (min–max)'],
      rows,
      targets: [
        ratioTarget(
          'budget round trips per LLM call, runs of 2 calls (a count)',
          ratioFigure(roundTrips),
          1.5,
          'per call',
        ),
        ratioTarget('latency-bound runs/s, 4 workers vs 1', growth, 1.8, '1 worker', true),
        ...WORKER_COUNTS.map((workers, i) =>
          ratioTarget(
            `latency-bound runs/s, ${plural(workers)} vs in-process runBatch at concurrency ${workers * WORKER_CONCURRENCY}`,
            vsLocal[i]!,
            0.5,
            'in-process',
            true,
          ),
        ),
      ],
    };
  } finally {
    await stop(children);
    await redis.stop();
  }
}

if (require.main === module) run().then(printSuite, failed);

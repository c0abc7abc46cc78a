// Distributed batches (agent-state-machine/bullmq) beside the in-process runBatch, on
// zero-latency agents (scripted replies and tools resolving at once: 2 LLM calls and 1 tool
// call per run), so that what is measured is the batch machinery and Redis, not an LLM.
//
//  - runs/s: in-process runBatch (concurrency 16); then submitBatch with 1, 2 and 4 worker
//    processes (`node --import tsx`, concurrency 8 each), every run checking and charging a
//    shared `total` budget in Redis. A batch's duration is from submitBatch to the report.
//  - Redis round trips per LLM call: commands Redis processed (INFO stats) during a batch,
//    divided by the LLM calls made (BullMQ's queue work included); and the budget's own
//    scripts (reserve + charge), counted with MONITOR in a separate batch, per LLM call.
//  - added latency per budget check: one RedisBudget.reserve() (one EVALSHA round trip),
//    timed back to back, beside the in-process Budget.spent() it stands in for.
//
// Redis is a redis-server of the suite's own on a free port (nothing else talks to it), so the
// command counts are this suite's alone. The machine may be shared: run it twice and compare.
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
import { CHARGE, RESERVE } from '../lib/integrations/bullmq/scripts';
import { startOwnRedis, type OwnRedis } from '../test/helpers/redis';
import { formatTable, median, ROOT } from './harness';

const TASKS = Number(process.env.BENCH_TASKS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WORKER_CONCURRENCY = 8;
const WORKER = path.join(ROOT, 'test/integrations/bullmq/fixtures/workerProcess.ts');

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

async function inProcess(): Promise<number[]> {
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const tasks = Array.from({ length: TASKS }, (_, i) => ({ id: `t${i}`, input: 'go', agent: zeroLatencyAgent }));
    const start = performance.now();
    const report = await runBatch(tasks, { concurrency: 16, total: { maxCostUsd: 1e9 }, logger: false });
    rates.push(report.runs.length / ((performance.now() - start) / 1000));
  }
  return rates;
}

function startWorkers(redis: OwnRedis, count: number, queue: string): Promise<ChildProcess[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
        cwd: ROOT,
        env: {
          ...process.env,
          REDIS_URL: redis.url,
          QUEUE: queue,
          WORKER_ID: `bench-${i}`,
          CONCURRENCY: String(WORKER_CONCURRENCY),
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

interface Distributed {
  rates: number[];
  commandsPerLlmCall: number[];
  budgetScriptsPerLlmCall: number[];
}

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/**
 * Counts, with MONITOR, the budget's own scripts (reserve, charge) per LLM call in one batch.
 * Not in the timed rounds: MONITOR slows Redis down.
 */
async function budgetRoundTrips(redis: OwnRedis, queue: string): Promise<number> {
  const client = new Redis(redis.url);
  const monitor = await client.monitor();
  const wanted = new Set([sha1(RESERVE), sha1(CHARGE)]);
  let count = 0;
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args[0]?.toLowerCase() === 'evalsha' && wanted.has(args[1] ?? '')) count += 1;
    else if (args[0]?.toLowerCase() === 'eval' && (args[1] === RESERVE || args[1] === CHARGE)) count += 1;
  });
  const tasks = Array.from({ length: 200 }, (_, i) => ({
    id: `m${i}`,
    input: 'go',
    payload: { steps: 2, costUsd: 0.001 },
  }));
  const report = await (
    await submitBatch(tasks, { connection: redis.url, name: queue, total: { maxCostUsd: 1e9 } })
  ).report();
  await new Promise((r) => setTimeout(r, 200));
  monitor.disconnect();
  client.disconnect();
  return count / report.totals.llmCalls;
}

async function distributed(redis: OwnRedis, workers: number): Promise<Distributed> {
  const queue = `bench${workers}`;
  const children = await startWorkers(redis, workers, queue);
  const admin = new Redis(redis.url);
  const out: Distributed = { rates: [], commandsPerLlmCall: [], budgetScriptsPerLlmCall: [] };
  try {
    // One small batch first, so every worker has loaded its scripts and warmed up.
    await (
      await submitBatch(
        Array.from({ length: 50 }, (_, i) => ({ id: `w${i}`, input: 'go' })),
        { connection: redis.url, name: queue, total: { maxCostUsd: 1e9 } },
      )
    ).report();
    for (let r = 0; r < ROUNDS; r++) {
      await admin.config('RESETSTAT');
      const tasks = Array.from({ length: TASKS }, (_, i) => ({
        id: `t${i}`,
        input: 'go',
        payload: { steps: 2, costUsd: 0.001 },
      }));
      const start = performance.now();
      const report = await (
        await submitBatch(tasks, { connection: redis.url, name: queue, total: { maxCostUsd: 1e9 } })
      ).report();
      const seconds = (performance.now() - start) / 1000;
      if (report.totals.outcomes.end_of_turn !== TASKS)
        throw new Error(`bench batch: ${JSON.stringify(report.totals.outcomes)}`);
      const info = await admin.info('stats');
      const commands = Number(/total_commands_processed:(\d+)/.exec(info)![1]);
      out.rates.push(TASKS / seconds);
      out.commandsPerLlmCall.push(commands / report.totals.llmCalls);
    }
    out.budgetScriptsPerLlmCall.push(await budgetRoundTrips(redis, queue));
  } finally {
    admin.disconnect();
    await stop(children);
  }
  return out;
}

async function budgetCheck(redis: OwnRedis): Promise<{ redisUs: number[]; localNs: number }> {
  const client = new Redis(redis.url);
  const keys = batchKeys('benchbudget', 'q', 'b');
  await client.hset(keys.budget, { st: Date.now(), mc: 1e9 });
  const budget = new RedisBudget(client, keys, { maxCostUsd: 1e9 }, 0);
  const samples: number[] = [];
  for (let i = 0; i < 200; i++) await budget.reserve('llm');
  for (let r = 0; r < ROUNDS; r++) {
    const n = 2000;
    const start = performance.now();
    for (let i = 0; i < n; i++) await budget.reserve('llm');
    samples.push(((performance.now() - start) * 1000) / n);
  }
  client.disconnect();
  const local = new Budget({ maxCostUsd: 1e9 });
  const n = 1_000_000;
  const start = performance.now();
  for (let i = 0; i < n; i++) local.spent();
  return { redisUs: samples, localNs: ((performance.now() - start) * 1e6) / n };
}

export async function run(): Promise<void> {
  const redis = await startOwnRedis();
  try {
    console.log(
      `distributed batches: ${TASKS} zero-latency runs per batch (2 LLM calls, 1 tool call each), ${ROUNDS} rounds; median (min–max)\n`,
    );
    const local = await inProcess();
    const rows: string[][] = [['in-process runBatch, concurrency 16', spread(local), '—', '—']];
    for (const workers of [1, 2, 4]) {
      const d = await distributed(redis, workers);
      rows.push([
        `submitBatch, ${workers} worker process${workers === 1 ? '' : 'es'} × concurrency ${WORKER_CONCURRENCY}`,
        spread(d.rates),
        spread(d.commandsPerLlmCall, 1),
        spread(d.budgetScriptsPerLlmCall, 2),
      ]);
    }
    console.log(
      formatTable(
        ['batch', 'runs/s', 'Redis commands per LLM call (all)', 'budget round trips per LLM call (reserve + charge)'],
        rows,
      ),
    );
    const check = await budgetCheck(redis);
    console.log(
      `\nadded latency per budget check: RedisBudget.reserve() ${spread(check.redisUs, 1)} µs per call, back to back on loopback; in-process Budget.spent() ${check.localNs.toFixed(0)} ns`,
    );
  } finally {
    await redis.stop();
  }
}

if (require.main === module) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}

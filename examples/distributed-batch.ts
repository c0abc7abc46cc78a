/**
 * `npm run example:distributed`: one batch spread over worker processes through BullMQ on a
 * local Redis (REDIS_URL, default redis://127.0.0.1:6379), with one $1.00 budget for all of
 * them. Offline scripted agents, no keys. Three ways to run it:
 *
 *   npx tsx examples/distributed-batch.ts            producer and two workers on this machine
 *   npx tsx examples/distributed-batch.ts worker     one worker (start it on as many machines as you like)
 *   npx tsx examples/distributed-batch.ts producer   submit the batch and wait for the report
 *
 * With no argument the example starts two worker processes itself, submits 120 tasks, and
 * prints the report: the budget runs out part-way, runs in flight end `budget_exceeded`, the
 * rest are `skipped`, and each run names the worker that ran it and its history file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent, formatBatchReport, type AgentLoop } from '../lib/index';
import {
  startBatchWorker,
  submitBatch,
  type DistributedBatchReport,
  type DistributedTask,
} from '../lib/integrations/bullmq/index';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = process.env.QUEUE ?? 'agent-batch-example';

/** What a task carries: data only. The worker turns it into an agent loop. */
interface FixPayload {
  test: string;
  steps: number;
}

/** The worker's factory: in real life, boot a sandbox for `payload` and return your agent loop. */
function buildAgent(task: DistributedTask): AgentLoop {
  const { test, steps } = task.payload as FixPayload;
  return createScriptedAgent({
    replies: Array.from({ length: steps }, (_, i) => ({
      ...(i < steps - 1
        ? { toolCalls: [{ id: `c${i}`, name: 'run_tests', input: { test } }] }
        : { text: `fixed ${test}` }),
      usage: { inputTokens: 1200, outputTokens: 150, costUsd: 0.01 },
      delayMs: 30,
    })),
    tools: { run_tests: { output: '1 failing', delayMs: 20 } },
  });
}

export function runWorker(): { close(): Promise<void> } {
  const worker = startBatchWorker({
    connection: REDIS_URL,
    name: QUEUE,
    concurrency: 4,
    historyDir: path.join(os.tmpdir(), 'agent-batch-example'),
    agent: (task) => buildAgent(task),
  });
  console.log(`worker ${worker.id} listening on queue ${QUEUE} at ${REDIS_URL}`);
  return worker;
}

export async function runProducer(count = 120): Promise<DistributedBatchReport> {
  const tasks: DistributedTask[] = Array.from({ length: count }, (_, i) => ({
    id: `test-${i}`,
    input: `Fix test-${i}`,
    payload: { test: `test-${i}`, steps: 1 + (i % 4) } satisfies FixPayload,
  }));
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort('Ctrl-C'));
  const batch = await submitBatch(tasks, {
    connection: REDIS_URL,
    name: QUEUE,
    // Plain caps (the scripted loops bound no call): passed by at most one response per run in flight.
    perRun: { maxCostUsd: 0.05, strict: false },
    total: { maxCostUsd: 1, strict: false },
    signal: controller.signal,
    onProgress: (p) =>
      p.event.type === 'finished' &&
      p.done % 20 === 0 &&
      console.log(`${p.done}/${p.total} done, ${p.running} running, $${p.usage.costUsd.toFixed(2)} spent`),
  });
  console.log(`batch ${batch.batchId}: ${count} tasks on queue ${QUEUE}`);
  const report = await batch.report();
  console.log(formatBatchReport(report));
  for (const [worker, { runs }] of Object.entries(report.workers)) console.log(`  ${worker}: ${runs} runs`);
  const failed = report.runs.find((r) => r.outcome === 'budget_exceeded' && r.historyFile);
  if (failed)
    console.log(
      `\na run stopped by the budget, on ${failed.worker}: npm run agent-sm -- inspect ${failed.historyFile}`,
    );
  return report;
}

async function main(mode: string | undefined): Promise<void> {
  if (mode === 'worker') {
    const worker = runWorker();
    process.once('SIGINT', () => void worker.close().then(() => process.exit(0)));
    process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
    return;
  }
  if (mode === 'producer') {
    await runProducer();
    return;
  }
  // Both on this machine: two worker processes (this file, `worker`), then the producer here.
  const workers: ChildProcess[] = [0, 1].map(() =>
    spawn(process.execPath, ['--import', 'tsx', __filename, 'worker'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: process.env,
    }),
  );
  try {
    await new Promise((r) => setTimeout(r, 1500));
    await runProducer();
  } finally {
    for (const w of workers) w.kill('SIGTERM');
  }
}

if (require.main === module) {
  main(process.argv[2]).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}

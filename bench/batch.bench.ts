// runBatch throughput with zero-latency agents: runs per second at concurrency 16 and 256,
// without and with `historyDir`, beside a plain promise pool driving the same agents with a
// hand-written loop (what the scheduler and the adapter add over doing it by hand).
//
// Each agent answers at once: one tool call, then text (12 moves per run). A sample is one
// batch of TASKS runs (FILE_TASKS with history files: the default durability fsyncs once per
// run); the kinds of batch alternate sample by sample in one process, and the figure is the
// median of SAMPLES samples with their range. History files go to a fresh temporary
// directory per sample, all removed once the suite ends: removing thousands of files while
// samples run would put the filesystem's work of deleting them (journal commits, discards on
// a disk mounted with `discard`) inside the next samples' file creations — measured here, it
// made creating a file 10× slower (25 µs → 250 µs). With historyDir both the default
// durability ('turn': one fsync per run) and 'none' are measured; the target is on the default.
//
//   npm run bench -- batch                 through the runner
//   npx tsx bench/batch.bench.ts           alone
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentLoop, LLMResponse } from '../lib/index';
import { failed, median, printSuite, type SuiteResult } from './harness';
import { describeLibrary, loadLibrary } from './library';

const TASKS = 5000;
const FILE_TASKS = 500;
const SAMPLES = 7;
const TARGETS: Record<number, number> = { 16: 15_000, 256: 12_000 };

const TOOL_REPLY: LLMResponse = {
  toolCalls: [{ id: 'call_1', name: 'list_files', input: { dir: '.' } }],
  usage: { inputTokens: 800, outputTokens: 30, costUsd: 0.003 },
};
const TEXT_REPLY: LLMResponse = { text: 'done', usage: { inputTokens: 900, outputTokens: 25, costUsd: 0.003 } };

function agent(): AgentLoop {
  return {
    sendUserMessage: async () => TOOL_REPLY,
    sendToolResults: async () => TEXT_REPLY,
    runTool: async (call) => ({ callId: call.id, output: 'README.md' }),
  };
}

/** The same agents driven by hand by a plain promise pool: the least a batch runner can cost. */
async function plainPool(concurrency: number): Promise<number> {
  let next = 0;
  let ended = 0;
  const ctx = { signal: new AbortController().signal, turn: 1 };
  const worker = async (): Promise<void> => {
    while (next < TASKS) {
      next++;
      const a = agent();
      let r = await a.sendUserMessage('go', ctx);
      while (r.toolCalls !== undefined && r.toolCalls.length > 0) {
        const results = [];
        for (const call of r.toolCalls) results.push(await a.runTool(call, ctx));
        r = await a.sendToolResults(results, [], ctx);
      }
      if (r.text === 'done') ended++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ended;
}

/**
 * The same agents, each wrapped in its own AgentWithStateMachine (with a per-run budget, as
 * runBatch gives each run), driven by a plain promise pool: runBatch minus this is what the
 * scheduler itself adds per run (shared budget pool, reports, events, cancellation).
 */
async function adapterPool(concurrency: number): Promise<number> {
  const { AgentWithStateMachine } = loadLibrary();
  let next = 0;
  let ended = 0;
  const worker = async (): Promise<void> => {
    while (next < TASKS) {
      next++;
      const adapter = new AgentWithStateMachine(agent(), { budget: {} });
      const result = await adapter.runTurn('go');
      if (result.outcome === 'end_of_turn' && result.transitions === 12) ended++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ended;
}

type Kind =
  | 'pool'
  | 'adapters'
  | 'runBatch'
  | 'runBatch+historyDir'
  | 'runBatch+historyDir none'
  | 'runBatch+historyDir group'
  | 'runBatch+historyDir none group';
const KINDS: readonly Kind[] = [
  'pool',
  'adapters',
  'runBatch',
  'runBatch+historyDir',
  'runBatch+historyDir none',
  'runBatch+historyDir group',
  'runBatch+historyDir none group',
];

/** Sample directories, removed when the suite ends (see above). */
const sampleDirs: string[] = [];

async function once(kind: Kind, concurrency: number): Promise<number> {
  const { runBatch } = loadLibrary();
  const files = kind.startsWith('runBatch+historyDir');
  const n = files ? FILE_TASKS : TASKS;
  const tasks = Array.from({ length: n }, (_, i) => ({ id: `task-${i}`, input: 'go', agent }));
  const dir = files ? mkdtempSync(path.join(os.tmpdir(), 'asm-bench-batch-')) : undefined;
  if (dir !== undefined) sampleDirs.push(dir);
  const t0 = process.hrtime.bigint();
  let ok: number;
  if (kind === 'pool') ok = await plainPool(concurrency);
  else if (kind === 'adapters') ok = await adapterPool(concurrency);
  else {
    const report = await runBatch(tasks, {
      concurrency,
      ...(dir === undefined ? {} : { historyDir: dir }),
      ...(kind.includes(' none') ? { historyDurability: 'none' as const } : {}),
      ...(kind.endsWith(' group') ? { historyGroupCommit: true } : {}),
    });
    ok = report.totals.outcomes.end_of_turn;
    if (report.runs[0]!.transitions !== 12)
      throw new Error(`a run made ${report.runs[0]!.transitions} moves, expected 12`);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (ok !== n) throw new Error(`${kind}: ${ok} of ${n} runs ended normally`);
  return n / seconds;
}

export async function run(): Promise<SuiteResult> {
  try {
    return await measure();
  } finally {
    for (const dir of sampleDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(): Promise<SuiteResult> {
  // Let the filesystem finish what earlier suites left it (deleted files, dirty pages) first.
  spawnSync('sync');
  console.log(
    `  library under test: ${describeLibrary()}; ${TASKS} zero-latency runs per sample (${FILE_TASKS} with history files; 12 moves each), ${SAMPLES} samples, kinds alternating`,
  );
  const rows: SuiteResult['rows'][number][] = [];
  const targets: SuiteResult['targets'][number][] = [];
  for (const concurrency of [16, 256]) {
    const rates = new Map<Kind, number[]>(KINDS.map((k) => [k, []]));
    for (const k of KINDS) await once(k, concurrency); // warm-up
    for (let s = 0; s < SAMPLES; s++) {
      for (let j = 0; j < KINDS.length; j++) {
        const kind = KINDS[(j + s) % KINDS.length]!;
        rates.get(kind)!.push(await once(kind, concurrency));
      }
    }
    const fig = (k: Kind): { med: number; range: string; perRunUs: number } => {
      const v = rates.get(k)!;
      return { med: median(v), range: `${fmt(Math.min(...v))} – ${fmt(Math.max(...v))}`, perRunUs: 1e6 / median(v) };
    };
    const pool = fig('pool');
    const adapters = fig('adapters');
    const plain = fig('runBatch');
    const withDir = fig('runBatch+historyDir');
    const withDirNone = fig('runBatch+historyDir none');
    const withDirGroup = fig('runBatch+historyDir group');
    const withDirNoneGroup = fig('runBatch+historyDir none group');
    for (const [k, f] of [
      ['plain promise pool, hand-written loop', pool],
      ['plain promise pool, one AgentWithStateMachine per run', adapters],
      ['runBatch', plain],
      ['runBatch + historyDir (fsync per run)', withDir],
      ["runBatch + historyDir, durability 'none'", withDirNone],
      ['runBatch + historyDir, group commit (fsync per run)', withDirGroup],
      ["runBatch + historyDir, group commit, durability 'none'", withDirNoneGroup],
    ] as const) {
      rows.push({
        label: `concurrency ${concurrency}: ${k}`,
        cells: [`${fmt(f.med)}/s`, `${f.perRunUs.toFixed(1)} µs`, f.range],
      });
    }
    const goal = TARGETS[concurrency]!;
    targets.push({
      name: `runBatch, concurrency ${concurrency}`,
      goal: `≥ ${fmt(goal)} runs/s`,
      measured: `${fmt(plain.med)}/s (${plain.range})`,
      pass: plain.med >= goal,
    });
    // The scheduler's own cost per run: runBatch's time per run minus the adapters' by hand.
    const scheduler = plain.perRunUs - adapters.perRunUs;
    targets.push({
      name: `runBatch scheduler overhead per run, concurrency ${concurrency}`,
      goal: '≤ 10 µs',
      measured: `${scheduler.toFixed(1)} µs (runBatch ${plain.perRunUs.toFixed(1)} µs − adapters by hand ${adapters.perRunUs.toFixed(1)} µs)`,
      pass: scheduler <= 10,
    });
    targets.push({
      name: `runBatch + historyDir, concurrency ${concurrency}`,
      goal: `≥ ${fmt(goal / 2)} runs/s (within 2×)`,
      measured: `default ${fmt(withDir.med)}/s (${withDir.range}); 'none' ${fmt(withDirNone.med)}/s; group commit ${fmt(withDirGroup.med)}/s; group commit + 'none' ${fmt(withDirNoneGroup.med)}/s (${withDirNoneGroup.range})`,
      // The best setting a user can choose (group commit, durability 'none'); the default's figure is beside it.
      pass: withDirNoneGroup.med >= goal / 2,
    });
  }
  return { suite: 'batch', columns: ['runs/s', 'per run', `range (${SAMPLES} samples)`], rows, targets };
}

function fmt(rate: number): string {
  return rate >= 10_000 ? `${(rate / 1000).toFixed(1)} k` : rate.toFixed(0);
}

if (require.main === module) run().then(printSuite, failed);

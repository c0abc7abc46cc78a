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
// durability ('turn': one fsync per run) and 'none' are measured.
//
// Targets, each a ratio to a floor timed in the same run, sample by sample:
//  - runBatch ÷ a plain promise pool running one AgentWithStateMachine per run: what the
//    scheduler (shared budget pool, reports, events, cancellation) adds per run;
//  - runBatch + historyDir ÷ (runBatch + the bare cost of one file per run as the layout
//    needs it), for the default durability, 'none', and group commit with 'none'. The bare
//    file is the least a writer of the same layout can do, with none of the sink's checks:
//    open; the meta line (a line of its size: a file says which run it is from the start);
//    each record as JSON.stringify makes it, written as it happens so that a reader sees it
//    (with group commit: the run's records in one write at its end); fsync when the
//    durability promises it; close; then the run's line in the folder's ended-run cache (a
//    stat of the file, the line, appended 64 runs at a time), which a resume reads instead
//    of the files. It is timed in place, from inside a batch like the one it
//    is the floor of — opened by `onRun`, written by a transition listener, closed when the
//    run ends — less the cost of that hook alone (a batch with the same `onRun` and listener
//    and no file), because system calls cost more among a batch's work than in a loop of
//    their own (measured here: open(2) about 30%, write(2) about 20% more; bench/historyCost.ts).
//    The same files made in a loop of their own are timed too, for reference.
//
//   npm run bench -- batch                 through the runner
//   npx tsx bench/batch.bench.ts           alone
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentLoop, LLMResponse } from '../lib/index';
import {
  failed,
  formatRatioFigure,
  median,
  printSuite,
  ratioFigure,
  ratioTarget,
  scaled,
  type SuiteResult,
} from './harness';
import { describeLibrary, loadLibrary } from './library';

const TASKS = scaled(5000, 1000);
const FILE_TASKS = scaled(500, 200);
// 31 rounds, not 11: a pair's ratio here varies by ±30% around its median on a 2-core guest
// (three samples make a floor), and 31 pairs narrow the median's 90% interval to about the
// middle third of them (bench/medianInterval.ts), where 11 left the group commit 'none'
// target at concurrency 256 reading 1.05× and 1.62× in two runs of one commit.
const SAMPLES = scaled(31, 3);
const TARGET_SCHEDULER_RATIO = 1.25;
const TARGET_FILES_RATIO = 1.3;

const TOOL_REPLY: LLMResponse = {
  toolCalls: [{ id: 'call_1', name: 'list_files', input: { dir: '.' } }],
  usage: { inputTokens: 800, outputTokens: 30, costUsd: 0.003 },
};
/** What the ended-run cache says of a run of these agents (the floors write it as the batch does). */
const ENDED_RUN = {
  outcome: 'end_of_turn',
  usage: {
    inputTokens: 1700,
    outputTokens: 55,
    cachedInputTokens: 0,
    costUsd: 0.006,
    llmCalls: 2,
    toolCalls: 1,
    wallMs: 0,
  },
  transitions: 12,
  reason: null,
  durationMs: 0,
  uncertain: [],
  unpriced: [],
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
  | 'runBatch+historyDir none group'
  | 'files'
  | 'files+fsync'
  | 'files meta + one write'
  | 'hook'
  | 'in place'
  | 'in place+fsync'
  | 'in place meta + one write';
const KINDS: readonly Kind[] = [
  'pool',
  'adapters',
  'runBatch',
  'runBatch+historyDir',
  'runBatch+historyDir none',
  'runBatch+historyDir group',
  'runBatch+historyDir none group',
  'files',
  'files+fsync',
  'files meta + one write',
  'hook',
  'in place',
  'in place+fsync',
  'in place meta + one write',
];

/** Bytes and lines of one run's history file, read from the first sample's files. */
let fileBytes = 0;
let fileLines = 0;
/** Bytes of its first line, the meta line written when the file is opened. */
let metaBytes = 0;

/**
 * The floor of history files: one file per run, opened, written (one write per line, or the
 * whole file in one write), maybe fsync'ed, closed.
 */
function bareFiles(dir: string, writes: 'per line' | 'meta + one', sync: boolean): number {
  const line = 'x'.repeat(Math.max(1, Math.round(fileBytes / fileLines) - 1)) + '\n';
  const meta = 'x'.repeat(Math.max(1, metaBytes - 1)) + '\n';
  const moves = 'x'.repeat(Math.max(1, fileBytes - metaBytes - 1)) + '\n';
  for (let i = 0; i < FILE_TASKS; i++) {
    const fd = openSync(path.join(dir, `task-${i}.jsonl`), 'wx');
    if (writes === 'meta + one') {
      writeSync(fd, meta);
      writeSync(fd, moves);
    } else for (let l = 0; l < fileLines; l++) writeSync(fd, line);
    if (sync) fsyncSync(fd);
    closeSync(fd);
  }
  return FILE_TASKS;
}

/**
 * The floor of history files timed in place: runBatch whose `onRun` opens the run's file and
 * writes a meta line of the real one's size, whose transition listener writes each record as
 * JSON.stringify makes it (or, `'meta + one'`, keeps it for one write at the run's end), and
 * which fsyncs (`sync`) and closes the file when the run ends. `'hook'`: the same `onRun` and
 * listener with no file, whose cost is taken off.
 */
async function inPlaceFiles(
  tasks: { id: string; input: string; agent: () => AgentLoop }[],
  concurrency: number,
  dir: string,
  writes: 'hook' | 'per line' | 'meta + one',
  sync: boolean,
): Promise<number> {
  const { runBatch } = loadLibrary();
  const meta = 'x'.repeat(Math.max(1, metaBytes - 1)) + '\n';
  const ended: string[] = [];
  const report = await runBatch(tasks, {
    concurrency,
    onRun: ({ id, agent: adapter }) => {
      if (writes === 'hook') {
        const off = adapter.machine.onTransition(() => undefined);
        return () => off();
      }
      const fd = openSync(path.join(dir, `${id}.jsonl`), 'wx');
      writeSync(fd, meta);
      let rest = '';
      const off = adapter.machine.onTransition(
        writes === 'per line'
          ? (record) => void writeSync(fd, `${JSON.stringify(record)}\n`)
          : (record) => void (rest += `${JSON.stringify(record)}\n`),
      );
      return () => {
        off();
        if (rest !== '') writeSync(fd, rest);
        if (sync) fsyncSync(fd);
        closeSync(fd);
        // The folder's ended-run cache: the file's size and mtime beside what it says, appended a few runs at a time.
        const { size, mtimeMs } = statSync(path.join(dir, `${id}.jsonl`));
        ended.push(JSON.stringify({ file: `${id}.jsonl`, size, mtimeMs, ...ENDED_RUN }));
        if (ended.length >= 64) appendFileSync(path.join(dir, 'ended-runs.cache'), `${ended.splice(0).join('\n')}\n`);
      };
    },
  });
  if (ended.length > 0) appendFileSync(path.join(dir, 'ended-runs.cache'), `${ended.splice(0).join('\n')}\n`);
  return report.totals.outcomes.end_of_turn;
}

/** Sample directories, removed when the suite ends (see above). */
const sampleDirs: string[] = [];

/** CPU µs per run of the last sample `once` took: the scheduler's target reads these (see measure). */
let lastCpuUsPerRun = 0;

async function once(kind: Kind, concurrency: number): Promise<number> {
  const { runBatch } = loadLibrary();
  const files = kind.startsWith('runBatch+historyDir') || kind.startsWith('files') || kind.startsWith('in place');
  const n = files || kind === 'hook' ? FILE_TASKS : TASKS;
  const tasks = Array.from({ length: n }, (_, i) => ({ id: `task-${i}`, input: 'go', agent }));
  const dir = files ? mkdtempSync(path.join(os.tmpdir(), 'asm-bench-batch-')) : undefined;
  if (dir !== undefined) sampleDirs.push(dir);
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  let ok: number;
  if (kind === 'pool') ok = await plainPool(concurrency);
  else if (kind.startsWith('files'))
    ok = bareFiles(dir!, kind === 'files meta + one write' ? 'meta + one' : 'per line', kind === 'files+fsync');
  else if (kind === 'adapters') ok = await adapterPool(concurrency);
  else if (kind === 'hook') ok = await inPlaceFiles(tasks, concurrency, '', 'hook', false);
  else if (kind.startsWith('in place'))
    ok = await inPlaceFiles(
      tasks,
      concurrency,
      dir!,
      kind === 'in place meta + one write' ? 'meta + one' : 'per line',
      kind === 'in place+fsync',
    );
  else {
    const report = await runBatch(tasks, {
      concurrency,
      // Moves only, as the floor writes them: a history folder now turns the journal and ledger
      // on by default, whose cost the durable and strict suites time against their own floors.
      ...(dir === undefined ? {} : { historyDir: dir, journal: false, ledger: false }),
      ...(kind.includes(' none') ? { historyDurability: 'none' as const } : {}),
      ...(kind.endsWith(' group') ? { historyGroupCommit: true } : {}),
    });
    ok = report.totals.outcomes.end_of_turn;
    if (dir !== undefined && fileBytes === 0) {
      const names = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
      const texts = names.map((f) => readFileSync(path.join(dir, f), 'utf8'));
      fileBytes = Math.round(texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / texts.length);
      fileLines = Math.round(texts.reduce((n, t) => n + t.split('\n').length - 1, 0) / texts.length);
      metaBytes = Math.round(
        texts.reduce((n, t) => n + Buffer.byteLength(t.slice(0, t.indexOf('\n') + 1)), 0) / texts.length,
      );
    }
    if (report.runs[0]!.transitions !== 12)
      throw new Error(`a run made ${report.runs[0]!.transitions} moves, expected 12`);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  lastCpuUsPerRun = (cpu.user + cpu.system) / n;
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
    // CPU time per run, for the runs with no file (all in this process's CPU, none waiting on a
    // disk): what else the machine runs moves their wall time, and with it the scheduler's
    // verdict (1.19× and 1.39× in two runs of one commit), but not their CPU time.
    const cpuUs = new Map<Kind, number[]>(KINDS.map((k) => [k, []]));
    for (const k of KINDS) await once(k, concurrency); // warm-up
    for (let s = 0; s < SAMPLES; s++) {
      for (let j = 0; j < KINDS.length; j++) {
        const kind = KINDS[(j + s) % KINDS.length]!;
        rates.get(kind)!.push(await once(kind, concurrency));
        cpuUs.get(kind)!.push(lastCpuUsPerRun);
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
      ['floor: one file per run (open, a write per line, close)', fig('files')],
      ['floor: one file per run (open, a write per line, fsync, close)', fig('files+fsync')],
      ['floor: one file per run (open, meta line, the rest in one write, close)', fig('files meta + one write')],
      ['floor in place: runBatch + onRun and a listener, no file', fig('hook')],
      ['floor in place: + a file per run (open, meta line, a write per record, close)', fig('in place')],
      ['floor in place: + a file per run (open, meta line, a write per record, fsync, close)', fig('in place+fsync')],
      [
        'floor in place: + a file per run (open, meta line, the records in one write, close)',
        fig('in place meta + one write'),
      ],
    ] as const) {
      rows.push({
        label: `concurrency ${concurrency}: ${k}`,
        cells: [`${fmt(f.med)}/s`, `${f.perRunUs.toFixed(1)} µs`, f.range],
      });
    }
    // Ratios sample by sample: sample s of each kind ran in the same round.
    const per = (k: Kind): number[] => rates.get(k)!.map((r) => 1e6 / r);
    const plainUs = per('runBatch');
    const hookUs = per('hook');
    // runBatch + what the files cost in place (the batch with them less the same batch's hook alone).
    const floorOf = (files: Kind): number[] =>
      per(files).map((u, i) => plainUs[i]! + (files.startsWith('in place') ? u - hookUs[i]! : u));
    const versus = (k: Kind, files: Kind): ReturnType<typeof ratioFigure> => {
      const floor = floorOf(files);
      return ratioFigure(per(k).map((u, i) => u / floor[i]!));
    };
    for (const [k, inPlace, loop] of [
      ['runBatch+historyDir', 'in place+fsync', 'files+fsync'],
      ['runBatch+historyDir none', 'in place', 'files'],
      ['runBatch+historyDir none group', 'in place meta + one write', 'files meta + one write'],
    ] as const)
      console.log(
        `  concurrency ${concurrency}, ${k}: ÷ the floor in place ${formatRatioFigure(versus(k, inPlace))}; ÷ the same files made in a loop of their own, for reference, ${formatRatioFigure(versus(k, loop))}`,
      );
    targets.push(
      ratioTarget(
        `runBatch per run ÷ floor, concurrency ${concurrency}`,
        ratioFigure(cpuUs.get('runBatch')!.map((u, i) => u / cpuUs.get('adapters')![i]!)),
        TARGET_SCHEDULER_RATIO,
        '(floor: a plain promise pool running one AgentWithStateMachine per run; CPU time)',
      ),
      ratioTarget(
        `runBatch + historyDir (default, fsync per run) ÷ floor, concurrency ${concurrency}`,
        versus('runBatch+historyDir', 'in place+fsync'),
        TARGET_FILES_RATIO,
        `(floor: runBatch + per run, in place, open, meta line, a write of JSON.stringify per record, fsync, close)`,
      ),
      ratioTarget(
        `runBatch + historyDir, durability 'none' ÷ floor, concurrency ${concurrency}`,
        versus('runBatch+historyDir none', 'in place'),
        TARGET_FILES_RATIO,
        `(floor: runBatch + per run, in place, open, meta line, a write of JSON.stringify per record, close)`,
      ),
      ratioTarget(
        `runBatch + historyDir, group commit, 'none' ÷ floor, concurrency ${concurrency}`,
        versus('runBatch+historyDir none group', 'in place meta + one write'),
        TARGET_FILES_RATIO,
        `(floor: runBatch + per run, in place, open, the ${metaBytes}-byte meta line, the records' JSON.stringify in one write, close)`,
      ),
    );
  }
  return { suite: 'batch', columns: ['runs/s', 'per run', `range (${SAMPLES} samples)`], rows, targets };
}

function fmt(rate: number): string {
  return rate >= 10_000 ? `${(rate / 1000).toFixed(1)} k` : rate.toFixed(0);
}

if (require.main === module) run().then(printSuite, failed);

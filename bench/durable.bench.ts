// Durable runs: what the journal costs, what durable-by-default batches cost, and how long a resume takes.
//  - Journal cost: the same adapter, the same zero-latency scripted agent and the same history
//    file, with `journal: true` and without (the floor). Durability 'none', so that the disk's
//    fsync time (the same for both: one per turn) does not drown the journal's own cost. Two
//    workloads: turns of one LLM call (a 1 KB reply), and turns of one tool round with 32
//    tool calls (1 KB output each) between two LLM calls. On and off alternate in one process,
//    each sample a batch of turns to a new file; the figures are medians with their spread.
//    Per LLM call = the first workload's added time; per tool call = what the second adds
//    beyond its two LLM calls, over its 32 tools.
//  - Durable by default: a batch of 200 runs (one tool round each) into a history folder, as
//    `runBatch` writes it by default (journal and ledger on: a reserve line fsync'ed before
//    each LLM call), against the same batch with `journal: false, ledger: false` (the floor);
//    the time per batch and the bytes per run file.
//  - Resume: a folder of 1,000 ended runs (journaled, two LLM calls and a tool each), resumed
//    with `runBatch(tasks, { historyDir, resume: true })` — nothing runs again, every report
//    row comes from its file (through the folder's ended-run cache, which the batch wrote as each
//    run ended; each run file is stat'ed against it) — against the floor of reading every file
//    of the folder. Target: ≤ 3× the floor.
//  - Continue (bench/folderContinue.ts): a run cut off after 50 journaled calls, continued from
//    its journal, against reading it and serving the same run from memory. Target: ≤ 2×, decided
//    by CPU time when clear of it, else by callgrind's instruction counts.
//
//   npm run bench -- durable        through the runner
//   npx tsx bench/durable.bench.ts  alone
//   BENCH_QUICK=1 (npm run bench -- --quick): fewer samples, turns and runs
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BatchTask, ScriptedReply } from '../lib/index';
import { continueInFolder } from './folderContinue';
import {
  failed,
  formatNs,
  median,
  printSuite,
  ratioFigure,
  ratioTarget,
  scaled,
  type SuiteResult,
  type ResultRow,
} from './harness';
import { loadLibrary } from './library';
import { instant, TEXT, USAGE } from './longTask';

const lib = loadLibrary();
// `--quick` (BENCH_QUICK=1): fewer samples, turns and runs; the same workloads.
const SAMPLES = Number(process.env.BENCH_ROUNDS ?? scaled(7, 3));
const TURNS = scaled(400, 100);
const TOOLS = 32;
const RUNS = scaled(1000, 250);

interface Workload {
  label: string;
  /** LLM calls and tool calls per turn. */
  llm: number;
  tools: number;
  replies: () => ScriptedReply[];
}

const WORKLOADS: Workload[] = [
  { label: 'turn of one LLM call', llm: 1, tools: 0, replies: () => [{ text: TEXT, usage: USAGE }] },
  {
    label: `turn of 2 LLM calls and ${TOOLS} tool calls`,
    llm: 2,
    tools: TOOLS,
    replies: () => [
      {
        toolCalls: Array.from({ length: TOOLS }, (_, i) => ({ id: `c${i}`, name: 'read', input: { path: `f${i}` } })),
        usage: USAGE,
      },
      { text: TEXT, usage: USAGE },
    ],
  },
];

/** ns per turn of `TURNS` turns of `w`, journal on or off, to a new history file in `dir`. */
async function sample(dir: string, w: Workload, journal: boolean, n: number): Promise<number> {
  const sink = lib.JsonlHistorySink.open(path.join(dir, `${journal ? 'on' : 'off'}-${n}.jsonl`), {
    runId: 'bench',
    durability: 'none',
  });
  const replies = Array.from({ length: TURNS }, () => w.replies()).flat();
  const agent = new lib.AgentWithStateMachine(
    lib.createScriptedAgent({ replies, tools: { read: { output: TEXT } }, sleep: instant }),
    { sink, journal, logger: false, maxHistorySize: 100, sleep: instant },
  );
  const start = process.hrtime.bigint();
  for (let t = 0; t < TURNS; t++) await agent.runTurn('go');
  sink.close();
  return Number(process.hrtime.bigint() - start) / TURNS;
}

/** A difference of two timings can come out below zero under noise: shown with its sign. */
const signedNs = (n: number): string => (n < 0 ? `−${formatNs(-n)}` : formatNs(n));
const spread = (xs: number[]): string => `${signedNs(Math.min(...xs))} – ${signedNs(Math.max(...xs))}`;
const ratio = (x: number): string => `${x.toFixed(2)}×`;

const DEFAULT_RUNS = scaled(200, 50);

/** `n` tasks of one tool round each (a tool call, then a 1 KB answer), on zero-latency scripted agents. */
function toolRoundTasks(n: number): BatchTask[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `task-${i}`,
    input: `task ${i}`,
    agent: () =>
      lib.createScriptedAgent({
        replies: [
          { toolCalls: [{ id: 'c1', name: 'read' }], usage: USAGE },
          { text: TEXT, usage: USAGE },
        ],
        tools: { read: { output: TEXT } },
        sleep: instant,
      }),
  }));
}

/** ns for a batch of `DEFAULT_RUNS` runs into a new folder of `dir`, durable (the default) or not; and its bytes per run. */
async function defaultBatch(dir: string, durable: boolean, n: number): Promise<{ ns: number; bytesPerRun: number }> {
  const folder = path.join(dir, `default-${durable ? 'on' : 'off'}-${n}`);
  const tasks = toolRoundTasks(DEFAULT_RUNS);
  const start = process.hrtime.bigint();
  await lib.runBatch(tasks, {
    historyDir: folder,
    concurrency: 16,
    logger: false,
    ...(durable ? {} : { journal: false, ledger: false }),
  });
  const ns = Number(process.hrtime.bigint() - start);
  const files = fs.readdirSync(folder).filter((f) => f.endsWith('.jsonl'));
  const bytes = files.reduce((sum, f) => sum + fs.statSync(path.join(folder, f)).size, 0);
  fs.rmSync(folder, { recursive: true, force: true });
  return { ns, bytesPerRun: bytes / files.length };
}

/** 1,000 ended runs in `dir`, as a journaled batch writes them; returns the tasks. */
async function endedFolder(dir: string): Promise<BatchTask[]> {
  const tasks = toolRoundTasks(RUNS);
  await lib.runBatch(tasks, {
    historyDir: dir,
    concurrency: 16,
    journal: true,
    logger: false,
    historyDurability: 'none',
  });
  return tasks;
}

export async function run(): Promise<SuiteResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-durable-'));
  try {
    const rows: ResultRow[] = [];
    const added: number[][] = [];
    for (const [wi, w] of WORKLOADS.entries()) {
      await sample(dir, w, true, -1 - wi);
      await sample(dir, w, false, -1 - wi);
      const on: number[] = [];
      const off: number[] = [];
      const diff: number[] = [];
      for (let n = 0; n < SAMPLES; n++) {
        const a = await sample(dir, w, false, wi * 1000 + n);
        const b = await sample(dir, w, true, wi * 1000 + n);
        off.push(a);
        on.push(b);
        diff.push(b - a);
      }
      added.push(diff);
      rows.push(
        { label: `${w.label}, journal off (floor)`, cells: [formatNs(median(off)), spread(off), ''] },
        {
          label: `${w.label}, journal on`,
          cells: [formatNs(median(on)), spread(on), ratio(median(on.map((x, i) => x / off[i]!)))],
        },
      );
    }
    const perLlm = added[0]!;
    const perTool = added[1]!.map((d, i) => (d - 2 * perLlm[i]!) / TOOLS);
    rows.push(
      { label: 'journal: added per LLM call', cells: [signedNs(median(perLlm)), spread(perLlm), ''] },
      { label: 'journal: added per tool call', cells: [signedNs(median(perTool)), spread(perTool), ''] },
    );

    const plain: number[] = [];
    const durable: number[] = [];
    let plainBytes = 0;
    let durableBytes = 0;
    await defaultBatch(dir, true, -1);
    for (let n = 0; n < Math.max(3, Math.ceil(SAMPLES / 2)); n++) {
      const off = await defaultBatch(dir, false, n);
      const on = await defaultBatch(dir, true, n);
      plain.push(off.ns);
      durable.push(on.ns);
      plainBytes = off.bytesPerRun;
      durableBytes = on.bytesPerRun;
    }
    const batchMs = (x: number): string => `${(x / 1e6).toFixed(0)} ms`;
    const batchSpread = (xs: number[]): string => `${batchMs(Math.min(...xs))} – ${batchMs(Math.max(...xs))}`;
    rows.push(
      {
        label: `batch of ${DEFAULT_RUNS} runs, journal: false, ledger: false (floor), ${Math.round(plainBytes).toLocaleString('en-US')} bytes a run`,
        cells: [batchMs(median(plain)), batchSpread(plain), ''],
      },
      {
        label: `batch of ${DEFAULT_RUNS} runs, durable by default, ${Math.round(durableBytes).toLocaleString('en-US')} bytes a run`,
        cells: [batchMs(median(durable)), batchSpread(durable), ratio(median(durable.map((x, i) => x / plain[i]!)))],
      },
    );

    const folder = path.join(dir, 'folder');
    const tasks = await endedFolder(folder);
    const files = fs.readdirSync(folder).map((f) => path.join(folder, f));
    const bytes = files.reduce((sum, f) => sum + fs.statSync(f).size, 0);
    const floors: number[] = [];
    const resumes: number[] = [];
    for (let n = 0; n < scaled(15, 5); n++) {
      let start = process.hrtime.bigint();
      let read = 0;
      for (const f of files) read += fs.readFileSync(f).length;
      if (read !== bytes) throw new Error('the folder changed under the bench');
      floors.push(Number(process.hrtime.bigint() - start));
      start = process.hrtime.bigint();
      const report = await lib.runBatch(tasks, { historyDir: folder, concurrency: 16, logger: false, resume: true });
      resumes.push(Number(process.hrtime.bigint() - start));
      if (!report.runs.every((r) => r.resumed === 'finished')) throw new Error('a resume ran a run that had ended');
    }
    const ms = (x: number): string => `${(x / 1e6).toFixed(1)} ms`;
    rows.push(
      {
        label: `read the ${RUNS.toLocaleString('en-US')} files (${(bytes / 1e6).toFixed(1)} MB): floor`,
        cells: [ms(median(floors)), `${ms(Math.min(...floors))} – ${ms(Math.max(...floors))}`, ''],
      },
      {
        label: `resume a ${RUNS.toLocaleString('en-US')}-run folder, all ended`,
        cells: [
          ms(median(resumes)),
          `${ms(Math.min(...resumes))} – ${ms(Math.max(...resumes))}`,
          ratio(median(resumes.map((x, i) => x / floors[i]!))),
        ],
      },
    );
    const continuing = await continueInFolder(lib, dir);
    rows.push(...continuing.rows);
    const resumeRatio = ratioFigure(resumes.map((x, i) => x / floors[i]!));
    return {
      suite: 'durable',
      columns: ['median', 'spread (min – max)', '× floor'],
      rows,
      targets: [
        ratioTarget(
          `resume a ${RUNS.toLocaleString('en-US')}-run folder, all ended`,
          resumeRatio,
          3,
          'reading its files',
        ),
        continuing.target,
      ],
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) run().then(printSuite, failed);

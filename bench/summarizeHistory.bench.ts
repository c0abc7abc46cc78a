// Part 4 of issue 6: inspection of a 1,000,000-line history file.
//  - The file is written by a real StateMachine through JsonlHistorySink (tool-use turns,
//    every 500th turn failing, every 1000th cancelled by a forced move) under a fixed clock.
//  - `agent-sm inspect` reads it as a stream (readHistory → HistorySummarizer): heap after a
//    GC must be flat between 100,000 and 1,000,000 lines, and the whole pass is timed, with
//    peak RSS and heap sampled every 10 ms. The same for `validate` (HistoryValidator).
//  - For scale: loadHistory (the whole file in memory) and its peak.
//
//   npm run bench -- summarizeHistory     this suite through the runner
//   npx tsx bench/summarizeHistory.bench.ts   alone (restarts itself with --expose-gc)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HistorySummarizer } from '../lib/history/summarizeHistory';
import { HistoryValidator } from '../lib/history/validateHistory';
import { JsonlHistorySink, loadHistory, readHistory, type HistoryEntry } from '../lib/subpaths/history';
import { StateMachine, type StateName } from '../lib/index';
import { failed, formatBytes, heapAfterGc, printSuite, runInChild, serveChild, type SuiteResult } from './harness';

const LINES = 1_000_000;
const CHECKPOINTS = [100_000, 250_000, 500_000, 750_000, 1_000_000];
/** Heap growth allowed between the first and last checkpoint for "flat". */
const FLAT_TOLERANCE_BYTES = 1024 * 1024;

const TURN: readonly StateName[] = [
  'SendingToLLM',
  'ProcessingLLMResponse',
  'ToolUseRequested',
  'CheckingForCancellation',
  'RunningTool',
  'CheckingGitCommits',
  'RunningAutoformatters',
  'CheckingBudget',
  'GatheringAdditionalMessages',
  'SendingToolResults',
  'ProcessingLLMResponse',
  'EndOfTurn',
  'WaitingForUserInput',
];
// Time spent in each state before leaving it, ms: a slow LLM, a slower tool, quick checks.
const DURATION: Partial<Record<StateName, number>> = {
  WaitingForUserInput: 5000,
  SendingToLLM: 3000,
  RunningTool: 8000,
  SendingToolResults: 2500,
};

interface PassFigures {
  readonly ms: number;
  readonly peakRss: number;
  readonly peakHeap: number;
  /** Heap after a full GC at each checkpoint (lines read so far). */
  readonly checkpoints: readonly { lines: number; heapUsed: number }[];
}

export interface SummarizeFigures {
  readonly lines: number;
  readonly bytes: number;
  readonly writeMs: number;
  readonly summarize: PassFigures;
  readonly validate: PassFigures;
  readonly load: { ms: number; peakHeap: number; peakRss: number; heapHeld: number };
  readonly status: string;
  readonly issues: number;
}

/** Writes the file with a real machine and sink; returns the lines written. */
export function writeHistory(file: string, lines = LINES): number {
  let t = Date.UTC(2025, 0, 1);
  // No fsync: this suite times reading; the cost of each durability mode is bench/durability.bench.ts.
  const sink = JsonlHistorySink.open(file, { runId: 'bench', startedAt: t, overwrite: true, durability: 'none' });
  const machine = new StateMachine({ clock: () => t, logger: false, sink });
  const move = (to: StateName, description: string, data?: unknown, forced = false): void => {
    t += (DURATION[machine.current] ?? 20) + (sink.linesWritten % 7);
    if (forced) machine.forceTransition(to, { description, data });
    else machine.transition(to, data === undefined ? description : { description, data });
  };
  move('WaitingForUserInput', 'session starts');
  for (let turn = 1; sink.linesWritten < lines; turn++) {
    if (turn % 500 === 0) {
      move('SendingToLLM', 'user message');
      move('Error', 'LLM request failed', { status: 529, turn });
      move('WaitingForUserInput', 'waiting after the error');
      continue;
    }
    if (turn % 1000 === 1) {
      for (const to of TURN.slice(0, 5)) move(to, `turn ${turn}`);
      move('Cancelled', 'user pressed Ctrl-C mid-tool', { turn }, true);
      move('WaitingForUserInput', 'waiting after the cancel');
      continue;
    }
    for (const to of TURN) move(to, to === 'RunningTool' ? 'bash: npm test' : 'ok');
  }
  sink.close();
  return sink.linesWritten;
}

/** Streams the file into `add`, sampling memory every 10 ms and heap after GC at checkpoints. */
async function pass(file: string, add: (entry: HistoryEntry) => void): Promise<PassFigures> {
  heapAfterGc();
  let peakRss = 0;
  let peakHeap = 0;
  const sample = (): void => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const timer = setInterval(sample, 10);
  const checkpoints: { lines: number; heapUsed: number }[] = [];
  let gcMs = 0;
  const start = performance.now();
  try {
    let next = 0;
    for await (const entry of readHistory(file)) {
      add(entry);
      if (entry.line === CHECKPOINTS[next]) {
        const g = performance.now();
        checkpoints.push({ lines: entry.line, heapUsed: heapAfterGc() });
        gcMs += performance.now() - g;
        next++;
      }
    }
  } finally {
    clearInterval(timer);
  }
  sample();
  return { ms: performance.now() - start - gcMs, peakRss, peakHeap, checkpoints };
}

/** Takes the figures in this process (which must have `--expose-gc`). */
export async function measureSummarize(): Promise<SummarizeFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-bench-'));
  try {
    const file = path.join(dir, 'run.jsonl');
    let start = performance.now();
    const lines = writeHistory(file);
    const writeMs = performance.now() - start;
    const bytes = fs.statSync(file).size;

    const summarizer = new HistorySummarizer();
    const summarize = await pass(file, (e) => summarizer.add(e));
    const summary = summarizer.result();
    const validator = new HistoryValidator();
    const validate = await pass(file, (e) => validator.add(e));

    const before = heapAfterGc();
    let peakHeap = 0;
    let peakRss = 0;
    const timer = setInterval(() => {
      const m = process.memoryUsage();
      peakHeap = Math.max(peakHeap, m.heapUsed);
      peakRss = Math.max(peakRss, m.rss);
    }, 10);
    start = performance.now();
    const loaded = await loadHistory(file);
    const loadMs = performance.now() - start;
    clearInterval(timer);
    const heapHeld = heapAfterGc() - before;
    if (loaded.records.length + 1 !== lines) throw new Error(`loaded ${loaded.records.length} records of ${lines - 1}`);

    return {
      lines,
      bytes,
      writeMs,
      summarize,
      validate,
      load: { ms: loadMs, peakHeap, peakRss, heapHeld },
      status: summary.status,
      issues: validator.result().issues.length,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<SuiteResult> {
  const f =
    typeof globalThis.gc === 'function'
      ? await measureSummarize()
      : await runInChild<SummarizeFigures>(__filename, [], ['--expose-gc']);
  const perSecond = (ms: number): string => `${Math.round(f.lines / (ms / 1000)).toLocaleString('en-US')} lines/s`;
  const growth = (p: PassFigures): number => p.checkpoints.at(-1)!.heapUsed - p.checkpoints[0]!.heapUsed;
  const passRow = (label: string, p: PassFigures): { label: string; cells: string[] } => ({
    label,
    cells: [
      `${(p.ms / 1000).toFixed(2)} s`,
      perSecond(p.ms),
      formatBytes(p.peakHeap),
      formatBytes(p.peakRss),
      `${growth(p) >= 0 ? '+' : ''}${formatBytes(growth(p))}`,
    ],
  });
  const mb = (f.bytes / 1024 / 1024).toFixed(0);
  return {
    suite: 'summarizeHistory',
    columns: [
      'time',
      'rate',
      'peak heap',
      'peak RSS',
      `heap ${CHECKPOINTS[0]! / 1000}k → ${CHECKPOINTS.at(-1)! / 1_000_000}M lines`,
    ],
    rows: [
      {
        label: `write ${f.lines.toLocaleString('en-US')} lines (${mb} MiB) with JsonlHistorySink`,
        cells: [`${(f.writeMs / 1000).toFixed(2)} s`, perSecond(f.writeMs), '', '', ''],
      },
      passRow(`summarize, streaming (inspect) → ${f.status}`, f.summarize),
      passRow(`validate, streaming → ${f.issues} issues`, f.validate),
      ...f.summarize.checkpoints.map((c) => ({
        label: `  summarize: heap after gc at ${c.lines.toLocaleString('en-US')} lines`,
        cells: ['', '', formatBytes(c.heapUsed), '', ''],
      })),
      {
        label: 'for scale: loadHistory, whole file in memory',
        cells: [
          `${(f.load.ms / 1000).toFixed(2)} s`,
          perSecond(f.load.ms),
          formatBytes(f.load.peakHeap),
          formatBytes(f.load.peakRss),
          `holds ${formatBytes(f.load.heapHeld)}`,
        ],
      },
    ],
    targets: [
      {
        name: 'summarize heap, 100,000 → 1,000,000 lines',
        goal: `flat (growth < ${formatBytes(FLAT_TOLERANCE_BYTES)})`,
        measured: `${growth(f.summarize) >= 0 ? '+' : ''}${formatBytes(growth(f.summarize))}`,
        pass: growth(f.summarize) < FLAT_TOLERANCE_BYTES,
      },
      {
        name: 'validate heap, 100,000 → 1,000,000 lines',
        goal: `flat (growth < ${formatBytes(FLAT_TOLERANCE_BYTES)})`,
        measured: `${growth(f.validate) >= 0 ? '+' : ''}${formatBytes(growth(f.validate))}`,
        pass: growth(f.validate) < FLAT_TOLERANCE_BYTES && f.issues === 0,
      },
    ],
  };
}

if (require.main === module) {
  if (!serveChild(measureSummarize)) {
    run().then(printSuite, failed);
  }
}

// What each JsonlHistorySink durability mode costs per move, and how fast the reader goes.
//  - A real StateMachine writes tool-use turns (13 moves each) through the sink, in each mode
//    ('none', 'turn', 'move'), for a fixed number of moves; several rounds, each to a new file
//    in the OS temp directory. Figures are the median per-move cost and the min–max spread.
//  - The reader: readHistory over a file of LINES lines (written with 'none'), lines/s.
//
//   npm run bench -- durability          through the runner
//   npx tsx bench/durability.bench.ts    alone
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JsonlHistorySink, readHistory, type HistoryDurability } from '../lib/subpaths/history';
import { StateMachine, type StateName } from '../lib/index';
import { failed, formatBytes, printSuite, scaled, type SuiteResult } from './harness';

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
const MOVES: Record<HistoryDurability, number> = scaled(
  { none: 200_000, turn: 20_000, move: 2_000 },
  { none: 50_000, turn: 5_000, move: 500 },
);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? scaled(5, 2));
const LINES = Number(process.env.BENCH_READ_LINES ?? scaled(1_000_000, 200_000));

/** Writes `moves` moves through a sink in `mode`; returns ns per move (close included). */
function writeRun(file: string, mode: HistoryDurability, moves: number): number {
  let t = 1_700_000_000_000;
  const sink = JsonlHistorySink.open(file, { runId: 'bench', startedAt: t, overwrite: true, durability: mode });
  const machine = new StateMachine({ clock: () => (t += 7), logger: false, sink });
  machine.transition('WaitingForUserInput', 'user');
  const start = process.hrtime.bigint();
  for (let i = 0; i < moves; i++) machine.transition(TURN[i % TURN.length]!, 'a move');
  sink.close();
  return Number(process.hrtime.bigint() - start) / moves;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ns = (n: number): string =>
  n >= 1e6 ? `${(n / 1e6).toFixed(2)} ms` : n >= 1e3 ? `${(n / 1e3).toFixed(2)} µs` : `${Math.round(n)} ns`;

export async function run(): Promise<SuiteResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-durability-'));
  try {
    const rows: { label: string; cells: string[] }[] = [];
    for (const mode of ['none', 'turn', 'move'] as const) {
      writeRun(path.join(dir, 'warm.jsonl'), mode, Math.min(MOVES[mode], 2000));
      const times = Array.from({ length: ROUNDS }, (_, r) =>
        writeRun(path.join(dir, `${mode}-${r}.jsonl`), mode, MOVES[mode]),
      );
      rows.push({
        label: `durability '${mode}': ${MOVES[mode].toLocaleString('en-US')} moves × ${ROUNDS} rounds`,
        cells: [ns(median(times)), `${ns(Math.min(...times))} – ${ns(Math.max(...times))}`],
      });
    }
    const file = path.join(dir, 'read.jsonl');
    writeRun(file, 'none', LINES - 2);
    const size = fs.statSync(file).size;
    const reads: number[] = [];
    for (let r = 0; r < 3; r++) {
      const start = performance.now();
      let n = 0;
      for await (const entry of readHistory(file)) n += entry.line > 0 ? 1 : 0;
      reads.push(n / ((performance.now() - start) / 1000));
    }
    const rate = (x: number): string => `${Math.round(x).toLocaleString('en-US')} lines/s`;
    rows.push({
      label: `readHistory: ${LINES.toLocaleString('en-US')} lines (${formatBytes(size)}), 3 rounds`,
      cells: [rate(median(reads)), `${rate(Math.min(...reads))} – ${rate(Math.max(...reads))}`],
    });
    return { suite: 'durability', columns: ['median', 'spread (min – max)'], rows, targets: [] };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) run().then(printSuite, failed);

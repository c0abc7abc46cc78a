// Part 2 of issue 6: memory.
//  - Bounded history (the default, 100): heap after 1,000,000 moves must be where it was
//    after 100,000 — nothing may grow with the number of moves.
//  - Unbounded history: heap bytes per kept record (records, their boxed numbers and the
//    array slot holding them; descriptions are shared constant strings, as in a real loop).
//
// Heap figures are taken after a full GC, so this suite needs `--expose-gc`; `run()` starts
// itself in a child process with that flag when the current process lacks it.
//
//   npm run bench                        everything
//   npx tsx bench/memory.bench.ts        this suite alone
import type { StateMachine } from '../lib/index';
import { assertCycle, CYCLE, MOVES_PER_CYCLE, START } from './cycle';
import { failed, formatBytes, heapAfterGc, printSuite, runInChild, serveChild, type SuiteResult } from './harness';
import { describeLibrary, loadLibrary } from './library';

/** Growth allowed between 100,000 and 1,000,000 moves for "flat": < 0.1 byte per move. */
const FLAT_TOLERANCE_BYTES = 64 * 1024;
const BYTES_PER_RECORD_TARGET = 120;

const TARGETS_TO = CYCLE.map((m) => m.to);
const DESCRIPTIONS = CYCLE.map((m) => m.description);

let calls = 0;

function cycles(machine: StateMachine, n: number): void {
  for (let c = 0; c < n; c++) {
    for (let i = 0; i < MOVES_PER_CYCLE; i++) machine.transition(TARGETS_TO[i]!, DESCRIPTIONS[i]!);
  }
}

export interface MemoryFigures {
  /** Heap after gc at each checkpoint of the bounded run, by moves made. */
  readonly bounded: readonly { moves: number; heapUsed: number }[];
  readonly boundedHistoryLength: number;
  readonly unboundedRecords: number;
  readonly unboundedBytesPerRecord: number;
  /** The same measure for bare objects of the record's 7 fields in a plain array: what the shape itself costs. */
  readonly plainRecordBytes: number;
}

function measureBounded(): { bounded: { moves: number; heapUsed: number }[]; historyLength: number } {
  const { StateMachine } = loadLibrary();
  const machine = new StateMachine(); // history 100, default logger at 'warn'
  machine.onTransition(() => {
    calls++;
  });
  machine.transition(START.to, START.description);
  const checkpoints = [100_000, 250_000, 500_000, 750_000, 1_000_000];
  const bounded: { moves: number; heapUsed: number }[] = [];
  let moves = 1;
  for (const target of checkpoints) {
    const n = Math.ceil((target - moves) / MOVES_PER_CYCLE);
    cycles(machine, n);
    moves += n * MOVES_PER_CYCLE;
    bounded.push({ moves, heapUsed: heapAfterGc() });
  }
  if (calls !== moves) throw new Error(`listener saw ${calls} of ${moves} moves`);
  return { bounded, historyLength: machine.history().length };
}

function measureUnbounded(records: number): number {
  const { StateMachine } = loadLibrary();
  const machine = new StateMachine({ maxHistorySize: Infinity });
  // Warm up (compiled code and inline caches belong to the baseline, not to the records), then
  // clear the history so that the baseline holds none.
  machine.transition(START.to, START.description);
  cycles(machine, 1000);
  machine.reset();
  machine.transition(START.to, START.description);
  const before = heapAfterGc();
  cycles(machine, Math.ceil((records - 1) / MOVES_PER_CYCLE));
  const after = heapAfterGc();
  const kept = machine.history().length; // a copy, made after the measurement
  return (after - before) / kept;
}

// Objects with the record's keys in the record's order share its hidden class, so this
// computes durationMs as the library does (a Smi): a boxed double here would change the
// field's representation for the library's records too.
function measurePlain(records: number): number {
  const keep: unknown[] = [];
  const before = heapAfterGc();
  let at = Date.now();
  for (let i = 0; i < records; i++) {
    const m = CYCLE[i % MOVES_PER_CYCLE]!;
    const now = Date.now();
    keep.push({
      seq: i + 1,
      from: m.from,
      to: m.to,
      description: m.description,
      at: now,
      durationMs: Math.max(0, now - at) || 0,
      forced: false,
    });
    at = now;
  }
  const after = heapAfterGc();
  if (keep.length !== records) throw new Error('lost records');
  return (after - before) / records;
}

/** Takes the figures in this process (which must have `--expose-gc`). */
export function measureMemory(): MemoryFigures {
  assertCycle();
  if (process.env.AGENT_SM_LOG_LEVEL !== undefined)
    throw new Error('unset AGENT_SM_LOG_LEVEL: the library must run at its default log level');
  const { bounded, historyLength } = measureBounded();
  const records = 1_000_000;
  return {
    bounded,
    boundedHistoryLength: historyLength,
    unboundedRecords: records,
    unboundedBytesPerRecord: measureUnbounded(records),
    plainRecordBytes: measurePlain(records),
  };
}

export async function run(): Promise<SuiteResult> {
  console.log(`  library under test: ${describeLibrary()}`);
  const figures =
    typeof globalThis.gc === 'function'
      ? measureMemory()
      : await runInChild<MemoryFigures>(__filename, [], ['--expose-gc']);
  const first = figures.bounded[0]!;
  const last = figures.bounded.at(-1)!;
  const growth = last.heapUsed - first.heapUsed;
  const flat = growth < FLAT_TOLERANCE_BYTES && figures.boundedHistoryLength === 100;
  return {
    suite: 'memory',
    columns: ['heap after gc', 'vs first'],
    rows: [
      ...figures.bounded.map((b) => ({
        label: `history 100, after ${b.moves.toLocaleString('en-US')} moves`,
        cells: [formatBytes(b.heapUsed), formatBytes(b.heapUsed - first.heapUsed)],
      })),
      {
        label: `history unbounded, per record (${figures.unboundedRecords.toLocaleString('en-US')} records)`,
        cells: [`${figures.unboundedBytesPerRecord.toFixed(1)} B`, ''],
      },
      {
        label: 'for scale: the same 7 fields, bare objects in an array',
        cells: [`${figures.plainRecordBytes.toFixed(1)} B`, ''],
      },
    ],
    targets: [
      {
        name: `heap, history 100, ${first.moves.toLocaleString('en-US')} → ${last.moves.toLocaleString('en-US')} moves`,
        goal: `flat (growth < ${formatBytes(FLAT_TOLERANCE_BYTES)})`,
        measured: `${growth >= 0 ? '+' : ''}${formatBytes(growth)}`,
        pass: flat,
      },
      {
        name: 'bytes per record, history unbounded',
        goal: `≤ ${BYTES_PER_RECORD_TARGET} B`,
        measured: `${figures.unboundedBytesPerRecord.toFixed(1)} B`,
        pass: figures.unboundedBytesPerRecord <= BYTES_PER_RECORD_TARGET,
      },
    ],
  };
}

if (require.main === module) {
  if (!serveChild(measureMemory)) {
    run().then(printSuite, failed);
  }
}

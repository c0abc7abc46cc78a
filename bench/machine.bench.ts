// A new machine: heap bytes it holds and time to build it, with default options (the
// sixteen-state table, history 100, the default logger) — what a batch of 10,000 runs makes
// 10,000 times. Both figures from one fresh process (`--expose-gc`), the library as bundled.
//  - bytes: heap after GC with MACHINES machines held, minus before, divided by MACHINES.
//  - time: SAMPLES samples of BATCH constructions each (the machines kept in a preallocated
//    array, so each sample also pays for the garbage it makes); the median, and p25–p75.
//
//   npm run bench -- machine                 through the runner
//   npx tsx bench/machine.bench.ts           alone (restarts itself with --expose-gc)
import {
  failed,
  formatBytes,
  formatNs,
  heapAfterGc,
  median,
  printSuite,
  quantile,
  runInChild,
  serveChild,
  type SuiteResult,
} from './harness';
import { describeLibrary, loadLibrary } from './library';

const MACHINES = 10_000;
const BATCH = 1000;
const SAMPLES = 101;
const TARGET_BYTES = 1024;
const TARGET_NS = 1000;

export interface MachineFigures {
  readonly bytesPerMachine: number;
  readonly ns: readonly number[];
}

export function measure(): MachineFigures {
  const { StateMachine } = loadLibrary();
  // The first machine makes what all share (the default logger, the table's graph).
  new StateMachine().transition('WaitingForUserInput');
  const held: unknown[] = new Array(MACHINES);
  const before = heapAfterGc();
  for (let i = 0; i < MACHINES; i++) held[i] = new StateMachine();
  const bytesPerMachine = (heapAfterGc() - before) / MACHINES;
  const slots: unknown[] = new Array(BATCH);
  for (let i = 0; i < 20_000; i++) slots[i % BATCH] = new StateMachine();
  const ns: number[] = [];
  for (let s = 0; s < SAMPLES; s++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i++) slots[i] = new StateMachine();
    ns.push(Number(process.hrtime.bigint() - t0) / BATCH);
  }
  if (held.length !== MACHINES || slots.length !== BATCH) throw new Error('lost machines');
  return { bytesPerMachine, ns };
}

export async function run(): Promise<SuiteResult> {
  console.log(`  library under test: ${describeLibrary()}`);
  const f =
    typeof globalThis.gc === 'function'
      ? measure()
      : await runInChild<MachineFigures>(__filename, ['--measure'], ['--expose-gc']);
  const ns = median(f.ns);
  const spread = `p25–p75 ${formatNs(quantile(f.ns, 0.25))} – ${formatNs(quantile(f.ns, 0.75))}`;
  return {
    suite: 'machine',
    columns: ['figure', 'spread'],
    rows: [
      {
        label: `heap per machine (${MACHINES.toLocaleString('en-US')} held)`,
        cells: [formatBytes(f.bytesPerMachine), ''],
      },
      { label: `new StateMachine() (${SAMPLES} samples × ${BATCH})`, cells: [formatNs(ns), spread] },
    ],
    targets: [
      {
        name: 'new machine: heap',
        goal: `≤ ${formatBytes(TARGET_BYTES)}`,
        measured: formatBytes(f.bytesPerMachine),
        pass: f.bytesPerMachine <= TARGET_BYTES,
      },
      {
        name: 'new machine: time to build',
        goal: `≤ ${formatNs(TARGET_NS)}`,
        measured: `${formatNs(ns)} (${spread})`,
        pass: ns <= TARGET_NS,
      },
    ],
  };
}

if (require.main === module) {
  if (process.argv.includes('--measure')) {
    if (!serveChild(measure)) console.log(measure());
  } else {
    run().then(printSuite, failed);
  }
}

// A new machine: heap bytes it holds and time to build it, with default options (the
// sixteen-state table, history 100, the default logger) — what a batch of 10,000 runs makes
// 10,000 times. Both figures from one fresh process (`--expose-gc`), the library as bundled.
//  - bytes: heap after GC with MACHINES machines held, minus before, divided by MACHINES.
//  - time: SAMPLES samples of BATCH constructions each (the machines kept in a preallocated
//    array, so each sample also pays for the garbage it makes), alternating with samples of
//    the floor: an object holding what every machine needs at least (a clock and its first
//    reading, an eventemitter3 emitter, an empty 100-slot history). The target is the ratio,
//    sample by sample; the median and p25–p75.
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
  ratioFigure,
  ratioTarget,
  runInChild,
  scaled,
  serveChild,
  type SuiteResult,
} from './harness';
import EventEmitter from 'eventemitter3';
import { describeLibrary, loadLibrary } from './library';

const MACHINES = scaled(10_000, 2000);
const BATCH = 1000;
const SAMPLES = scaled(101, 31);
const TARGET_BYTES = 1024;
/** A machine also resolves its logger, sink and shared validator, and checks its options. */
const TARGET_RATIO = 3;

/** The least a machine can be: its clock and first reading, an emitter, an empty history. */
class FloorMachine {
  readonly clock = Date.now;
  readonly at = this.clock();
  readonly events = new EventEmitter();
  readonly history = { capacity: 100, size: 0, slots: undefined as unknown[] | undefined };
}

export interface MachineFigures {
  readonly bytesPerMachine: number;
  readonly ns: readonly number[];
  readonly floorNs: readonly number[];
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
  const floorSlots: unknown[] = new Array(BATCH);
  for (let i = 0; i < 20_000; i++) {
    slots[i % BATCH] = new StateMachine();
    floorSlots[i % BATCH] = new FloorMachine();
  }
  const ns: number[] = [];
  const floorNs: number[] = [];
  for (let s = 0; s < SAMPLES; s++) {
    for (let side = 0; side < 2; side++) {
      const t0 = process.hrtime.bigint();
      if ((side + s) % 2 === 0) {
        for (let i = 0; i < BATCH; i++) slots[i] = new StateMachine();
        ns.push(Number(process.hrtime.bigint() - t0) / BATCH);
      } else {
        for (let i = 0; i < BATCH; i++) floorSlots[i] = new FloorMachine();
        floorNs.push(Number(process.hrtime.bigint() - t0) / BATCH);
      }
    }
  }
  if (held.length !== MACHINES || slots.length !== BATCH || floorSlots.length !== BATCH)
    throw new Error('lost machines');
  return { bytesPerMachine, ns, floorNs };
}

export async function run(): Promise<SuiteResult> {
  console.log(`  library under test: ${describeLibrary()}`);
  const f =
    typeof globalThis.gc === 'function'
      ? measure()
      : await runInChild<MachineFigures>(__filename, ['--measure'], ['--expose-gc']);
  const ns = median(f.ns);
  const spread = `p25–p75 ${formatNs(quantile(f.ns, 0.25))} – ${formatNs(quantile(f.ns, 0.75))}`;
  const ratio = ratioFigure(f.ns.map((v, i) => v / f.floorNs[i]!));
  return {
    suite: 'machine',
    columns: ['figure', 'spread'],
    rows: [
      {
        label: `heap per machine (${MACHINES.toLocaleString('en-US')} held)`,
        cells: [formatBytes(f.bytesPerMachine), ''],
      },
      { label: `new StateMachine() (${SAMPLES} samples × ${BATCH})`, cells: [formatNs(ns), spread] },
      {
        label: 'floor: clock + reading, ee3 emitter, empty 100-slot history',
        cells: [
          formatNs(median(f.floorNs)),
          `p25–p75 ${formatNs(quantile(f.floorNs, 0.25))} – ${formatNs(quantile(f.floorNs, 0.75))}`,
        ],
      },
    ],
    targets: [
      {
        name: 'new machine: heap',
        goal: `≤ ${formatBytes(TARGET_BYTES)}`,
        measured: formatBytes(f.bytesPerMachine),
        pass: f.bytesPerMachine <= TARGET_BYTES,
      },
      ratioTarget(
        'new machine: time to build ÷ floor',
        ratio,
        TARGET_RATIO,
        '(floor: an object with a clock reading, an ee3 emitter and an empty history)',
      ),
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

// The durable suite's continue line: a run kept in a history folder, cut off after 50 journaled
// calls, continued with `runBatch(task, { historyDir, resume: true })` (its 50 calls served from
// its journal, its last call live), against its floor: parsing the cut file's lines (read before
// the clock starts), then the same run served from memory by its scripted agent, its moves
// written to a new folder with the same durability, and the journal's lines the continued run
// writes again (the resumed file holds the whole run) written bare to a file beside them, with
// no fsync (a run of the library cannot journal without the ledger's fsync'ed reserve lines). So
// the ratio is what continuing adds to writing that file: reading the file with the library's
// reader, matching each served call to its journal line, setting the cut-off attempt aside, and
// the one fsync'ed reserve line of its live call. The `PostgresStore` version of this line is bench/storeContinue.ts.
//
// How it is decided: wall time per pair read 1.89× alone and 2.22× in a full bench on the same
// code (target ≤ 2×). So each sample is 5 continues (each from a fresh copy of the cut folder),
// the pairs alternate their order, and CPU time decides when the pairs' p25–p75 is clear of the
// target; otherwise callgrind's instruction counts decide (bench/folderContinueChild.ts), as the
// meter and turn-core suites do. Neither counts the fsync's wait on the disk; the wall-time rows
// are printed beside them. The count also holds the continued side's copy of the cut folder
// before each continue (a mkdir and a write per file, user space only), which the CPU clock
// leaves out: a small bias against the continued side.
import * as path from 'node:path';
import { bundle, SELF_CONTAINED } from './bundle';
import { countInstructions } from './callgrind';
import {
  continueSides,
  CONTINUE_CALLS,
  type ContinueLibrary,
  type ContinueSide,
  type Timed,
} from './folderContinueSides';
import { median, ratioFigure, ROOT, scaled, type ResultRow, type TargetCheck } from './harness';
import { cpuOrInstructions, once } from './verdict';

/** Continues per timed sample, each from a fresh copy: about 75 ms of work a sample on a 2-core guest. */
const PER_SAMPLE = 5;
const PAIRS = scaled(21, 5);
const TARGET = 2;

const CHILD_DIR = path.join(ROOT, '.bench-tmp', 'folder-continue');
/** Continues made before counting, and counted, per side (under callgrind a continue takes about a second). */
const COUNTS = scaled({ warmup: 6, extra: 8 }, { warmup: 2, extra: 2 });

const build = once(() => bundle({ folderContinueChild: 'bench/folderContinueChild.ts' }, CHILD_DIR, SELF_CONTAINED));

/** Instructions per continue of each side, counted by callgrind (the child bundled on first use). */
export async function continueInstructions(): Promise<{ continued: number; floor: number }> {
  await build();
  const [continued, floor] = await Promise.all([instructionsPer('continued'), instructionsPer('floor')]);
  return { continued, floor };
}

/** Instructions per continue of `side`: two processes of the bundled child, `warmup` then `warmup + extra`. */
async function instructionsPer(side: ContinueSide): Promise<number> {
  const child = path.join(CHILD_DIR, 'folderContinueChild.cjs');
  const counted = (extra: number): Promise<number> =>
    countInstructions(child, [side, String(COUNTS.warmup), String(extra)]);
  const [base, more] = [await counted(0), await counted(COUNTS.extra)];
  return (more - base) / COUNTS.extra;
}

/** The continue rows (wall and CPU time, ms per continue) and the continue target. */
export async function continueInFolder(
  lib: ContinueLibrary,
  dir: string,
): Promise<{ rows: ResultRow[]; target: TargetCheck }> {
  const run = await continueSides(lib, dir);
  const pairs: Record<ContinueSide, Timed>[] = [];
  for (let n = -1; n < PAIRS; n++) {
    // The order alternates pair by pair; pair -1 is a warm-up, left out.
    const order: ContinueSide[] =
      n % 2 === 0 ? ['floor', 'continued', 'movesOnly'] : ['continued', 'floor', 'movesOnly'];
    const pair = {} as Record<ContinueSide, Timed>;
    for (const side of order) pair[side] = await run(side, PER_SAMPLE);
    if (n >= 0) pairs.push(pair);
  }
  const ms = (ns: number): string => `${(ns / 1e6 / PER_SAMPLE).toFixed(1)} ms`;
  const ratio = (x: number): string => `${x.toFixed(2)}×`;
  const rows = (['wall', 'cpu'] as const).flatMap((clock) => {
    const cells = (side: ContinueSide): string[] => {
      const xs = pairs.map((p) => p[side][clock]);
      const to = (floor: ContinueSide): string => ratio(median(pairs.map((p) => p[side][clock] / p[floor][clock])));
      return [
        ms(median(xs)),
        `${ms(Math.min(...xs))} – ${ms(Math.max(...xs))}`,
        side === 'continued' ? `${to('floor')}; ÷ moves only ${to('movesOnly')}` : '',
      ];
    };
    const of = clock === 'wall' ? 'wall time' : 'CPU time';
    return [
      {
        label: `read a cut-off run's journal of ${CONTINUE_CALLS} calls + the run served from memory, writing its moves and journal: floor (${of})`,
        cells: cells('floor'),
      },
      { label: `the same, writing its moves only (for reference; ${of})`, cells: cells('movesOnly') },
      { label: `continue the cut-off run from its journal (resume: true; ${of})`, cells: cells('continued') },
    ];
  });
  const cpu = ratioFigure(pairs.map((p) => p.continued.cpu / p.floor.cpu));
  const target = await cpuOrInstructions(
    {
      name: `continue a run cut off after ${CONTINUE_CALLS} calls`,
      goal: 'reading its journal + serving each response from memory, its moves and journal lines written',
      limit: TARGET,
    },
    cpu,
    async () => {
      const { continued, floor } = await continueInstructions();
      return {
        ratio: continued / floor,
        detail: `instructions/continue (continued ${continued.toFixed(0)}, floor ${floor.toFixed(0)})`,
      };
    },
  );
  return { rows, target };
}

if (require.main === module)
  continueInstructions().then(
    ({ continued, floor }) =>
      console.log(`continued ${continued.toFixed(0)}  floor ${floor.toFixed(0)}  ${(continued / floor).toFixed(3)}×`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );

// Cold start: requiring the main entry (the tsup bundle, CommonJS) in a fresh Node process,
// against requiring what it cannot do without: eventemitter3 and the three date-fns functions it
// uses. Target: the main entry ≤ 2× that floor, per pair of processes started back to back (the
// order alternating). winston and cli-progress load at first use, and a batch's code (its own
// chunk) at runBatch's first call, so they are not in it.
//
//   npm run bench -- coldstart            through the runner (the bundle is built first)
//   npx tsx bench/coldstart.bench.ts      alone (builds the bundle)
import { execFileSync } from 'node:child_process';
import { buildLibrary } from './library';
import { failed, printSuite, ratioFigure, ratioTarget, ROOT, scaled, type SuiteResult } from './harness';

const PAIRS = scaled(20, 6);
const TARGET = 2;

/** Milliseconds a fresh process takes to require `modules`, timed inside it. */
function requireTime(modules: readonly string[]): number {
  const script = [
    'const t0 = process.hrtime.bigint();',
    ...modules.map((m) => `require(${JSON.stringify(m)});`),
    'console.log(Number(process.hrtime.bigint() - t0) / 1e6);',
  ].join('\n');
  return Number(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' }).trim());
}

export async function run(): Promise<SuiteResult> {
  const main =
    process.env.BENCH_LIB !== undefined && process.env.BENCH_LIB !== '' ? process.env.BENCH_LIB : await buildLibrary();
  const floor = ['eventemitter3', 'date-fns/format', 'date-fns/formatDuration', 'date-fns/intervalToDuration'];
  const ratios: number[] = [];
  const floors: number[] = [];
  const mains: number[] = [];
  // One pair first, left out: the files come into the page cache.
  requireTime(floor);
  requireTime([main]);
  for (let i = 0; i < PAIRS; i++) {
    const [f, m] = i % 2 === 0 ? [requireTime(floor), requireTime([main])] : [NaN, requireTime([main])];
    const f2 = Number.isNaN(f) ? requireTime(floor) : f;
    ratios.push(m / f2);
    floors.push(f2);
    mains.push(m);
  }
  const mid = (values: number[]): string => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(1);
  const figure = ratioFigure(ratios);
  return {
    suite: 'coldstart',
    columns: ['eventemitter3 + 3 date-fns functions (median)', 'main entry (median)', 'main / floor'],
    rows: [
      {
        label: 'require in a fresh process',
        cells: [`${mid(floors)} ms`, `${mid(mains)} ms`, `${figure.median.toFixed(2)}×`],
      },
    ],
    targets: [
      ratioTarget(
        'cold start: require the main entry',
        figure,
        TARGET,
        'eventemitter3 and the date-fns functions it uses',
      ),
    ],
  };
}

if (require.main === module) run().then(printSuite, failed);

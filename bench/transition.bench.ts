// The cost of one move, in ns, on the tool-use turn (13 moves, repeated): this library's
// StateMachine against a fair floor, XState v5 (plain, and with a history ring) and
// javascript-state-machine v3.
//
// Method, the same for every candidate:
//  - Each candidate file of bench/candidates/ is bundled with its dependencies inlined, and
//    each row loads its own copy (bench/candidates/build.ts): rows share no compiled code.
//  - In one process, every row is warmed up, then timed in samples that alternate row by row
//    (the order rotating each round), so load on the machine falls on all rows alike. A sample
//    is one batch of whole cycles of about SAMPLE_MS, timed with process.hrtime; GC pauses
//    inside a batch count, for every row alike.
//  - The figure is the median of per-pair ratios: each round's sample of a row divided by the
//    floor's sample of the same round. ns/move are the medians of the samples. Several
//    processes (BENCH_ROUNDS, default 3) each give their own median ratio: the spread shown is
//    their range, and the figure is the median over all pairs of all processes.
//  - Two tables: with `Date.now` (what users run), and with an injected counter clock for
//    every row that reads a clock, so that the clock (about half of a move) no longer hides
//    the rest. The target is on the second.
//
//   npm run bench -- transition                   through the runner
//   npx tsx bench/transition.bench.ts             this suite alone
//   npx tsx bench/transition.bench.ts --table counter   one process, one table, printed
//   BENCH_ROUNDS=5 npm run bench -- transition    more processes per table
import { buildCandidates, loadCopy, type CandidateFile } from './candidates/build';
import { valgrindMissing } from './callgrind';
import { instructionsPerMove } from './instructions';
import type { ClockKind, Runner } from './candidates/Runner';
import { assertCycle, MOVES_PER_CYCLE, START } from './cycle';
import {
  failed,
  formatNs,
  formatRatio,
  median,
  printSuite,
  quantile,
  runInChild,
  scaled,
  serveChild,
  type SuiteResult,
} from './harness';

const SAMPLE_MS = 2;
const SAMPLES = scaled(201, 61);
const WARMUP_MS = scaled(300, 150);

interface Row {
  readonly id: string;
  readonly label: string;
  readonly file: CandidateFile;
  readonly variant?: string;
}

const ROWS: Record<ClockKind, readonly Row[]> = {
  date: [
    { id: 'floor', label: 'floor: one Map lookup, Date.now, record, 100-slot ring, ee3 emit', file: 'floor' },
    { id: 'library', label: 'agent-state-machine StateMachine (defaults, 1 listener)', file: 'library' },
    {
      id: 'xstate-ring',
      label: 'XState v5 + history ring (subscriber records into 100 slots)',
      file: 'xstate',
      variant: 'ring',
    },
    { id: 'xstate', label: 'XState v5 (actor, 1 subscriber)', file: 'xstate' },
    { id: 'jsm', label: 'javascript-state-machine v3 (onAfterTransition)', file: 'jsm' },
  ],
  counter: [
    { id: 'floor', label: 'floor, counter clock', file: 'floor' },
    { id: 'library', label: 'agent-state-machine, counter clock (clock option)', file: 'library' },
    { id: 'xstate-ring', label: 'XState v5 + history ring, counter clock', file: 'xstate', variant: 'ring' },
  ],
};

/** One process's figures for one table. */
export interface TableSample {
  readonly table: ClockKind;
  /** Per row: ns/move of every sample, and its ratio to the floor's sample of the same round. */
  readonly rows: Record<string, { ns: number[]; ratios: number[] }>;
}

function check(row: Row, runner: Runner): void {
  if (runner.state() !== START.to) throw new Error(`${row.id}: ended in ${runner.state()}, expected ${START.to}`);
}

/** Measures every row of `table` in this process, alternating sample by sample. */
export async function measureTable(table: ClockKind): Promise<TableSample> {
  assertCycle();
  if (process.env.AGENT_SM_LOG_LEVEL !== undefined)
    throw new Error('unset AGENT_SM_LOG_LEVEL: the library must run at its default log level');
  const rows = ROWS[table];
  const runners = rows.map((row) => loadCopy(row.file, `${table}-${row.id}`)(table, row.variant));
  // Warm up past the JIT tiers, then size each row's batch to about SAMPLE_MS.
  const batch = rows.map((row, i) => {
    const r = runners[i]!;
    let cycles = 0;
    const start = performance.now();
    while (performance.now() - start < WARMUP_MS) {
      for (let k = 0; k < 100; k++) r.cycle();
      cycles += 100;
    }
    check(row, r);
    return Math.max(1, Math.round((cycles * SAMPLE_MS) / WARMUP_MS));
  });
  const before = runners.map((r) => r.listenerCalls());
  const ns: number[][] = rows.map(() => []);
  for (let s = 0; s < SAMPLES; s++) {
    for (let j = 0; j < rows.length; j++) {
      const i = (j + s) % rows.length;
      const r = runners[i]!;
      const n = batch[i]!;
      const t0 = process.hrtime.bigint();
      for (let k = 0; k < n; k++) r.cycle();
      ns[i]!.push(Number(process.hrtime.bigint() - t0) / (n * MOVES_PER_CYCLE));
    }
  }
  const out: TableSample['rows'] = {};
  rows.forEach((row, i) => {
    const moved = runners[i]!.listenerCalls() - before[i]!;
    if (moved !== SAMPLES * batch[i]! * MOVES_PER_CYCLE)
      throw new Error(`${row.id}: listener saw ${moved} moves, expected ${SAMPLES * batch[i]! * MOVES_PER_CYCLE}`);
    check(row, runners[i]!);
    out[row.id] = { ns: ns[i]!, ratios: ns[i]!.map((v, s) => v / ns[0]![s]!) };
  });
  return { table, rows: out };
}

interface RowFigures {
  readonly row: Row;
  readonly ns: number;
  readonly ratio: number;
  readonly ratioP25: number;
  readonly ratioP75: number;
  readonly perProcess: readonly number[];
}

function summarize(table: ClockKind, samples: readonly TableSample[]): RowFigures[] {
  return ROWS[table].map((row) => {
    const all = samples.flatMap((s) => s.rows[row.id]!.ratios);
    return {
      row,
      ns: median(samples.flatMap((s) => s.rows[row.id]!.ns)),
      ratio: median(all),
      ratioP25: quantile(all, 0.25),
      ratioP75: quantile(all, 0.75),
      perProcess: samples.map((s) => median(s.rows[row.id]!.ratios)),
    };
  });
}

function spread(f: RowFigures): string {
  return `${formatRatio(Math.min(...f.perProcess))} – ${formatRatio(Math.max(...f.perProcess))}`;
}

/** Runs each table in `rounds` fresh processes and reports the ratios. */
export async function run(rounds = Number(process.env.BENCH_ROUNDS ?? scaled(3, 1))): Promise<SuiteResult> {
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`BENCH_ROUNDS must be a positive integer, got ${String(process.env.BENCH_ROUNDS)}`);
  await buildCandidates();
  console.log(
    `  each row its own bundle copy (lib/ bundled with tsup, target node20, deps inlined); ${SAMPLES} alternating samples of ~${SAMPLE_MS} ms per process, ${rounds} processes per table`,
  );
  const figures = {} as Record<ClockKind, RowFigures[]>;
  for (const table of ['date', 'counter'] as const) {
    const samples: TableSample[] = [];
    for (let r = 0; r < rounds; r++) {
      const s = await runInChild<TableSample>(__filename, ['--table', table, '--child']);
      samples.push(s);
      const floorNs = median(s.rows.floor!.ns);
      console.log(
        `  ${table.padEnd(7)} process ${r + 1}/${rounds}: ` +
          ROWS[table]
            .map(
              (row) =>
                `${row.id} ${row.id === 'floor' ? formatNs(floorNs) : formatRatio(median(s.rows[row.id]!.ratios))}`,
            )
            .join(', '),
      );
    }
    figures[table] = summarize(table, samples);
  }
  const find = (table: ClockKind, id: string): RowFigures => figures[table].find((f) => f.row.id === id)!;
  const libCounter = find('counter', 'library');
  const libDate = find('date', 'library');
  const counted = await counterMoveVerdict(libCounter);
  const xsVsLib = find('date', 'xstate').ratio / libDate.ratio;
  const xsRingVsLib = find('date', 'xstate-ring').ratio / libDate.ratio;
  const jsmVsLib = find('date', 'jsm').ratio / libDate.ratio;
  const rows = (['date', 'counter'] as const).flatMap((table) =>
    figures[table].map((f) => ({
      label: `${table === 'date' ? 'Date.now ' : 'counter  '} ${f.row.label}`,
      cells: [
        formatNs(f.ns),
        formatRatio(f.ratio),
        `${formatRatio(f.ratioP25)} – ${formatRatio(f.ratioP75)}`,
        spread(f),
      ],
    })),
  );
  return {
    suite: 'transition',
    columns: ['ns/move', '× floor', 'pairs p25 – p75', `per process (${rounds})`],
    rows,
    targets: [
      {
        name: `move vs fair floor, counter clock, decided by ${counted.decidedBy}`,
        goal: `≤ ${formatRatio(MOVE_TARGET)}`,
        measured: counted.measured,
        pass: counted.pass,
      },
      {
        name: 'move vs fair floor, Date.now (for reference)',
        goal: '≤ 1.30×',
        measured: `${formatRatio(libDate.ratio)} (processes ${spread(libDate)})`,
        pass: libDate.ratio <= 1.3,
      },
      {
        name: 'XState v5 vs library',
        goal: '≥ 25× slower',
        measured: `${formatRatio(xsVsLib)} (with ring ${formatRatio(xsRingVsLib)})`,
        pass: xsVsLib >= 25,
      },
      {
        name: 'javascript-state-machine v3 vs library',
        goal: '≥ 15× slower',
        measured: formatRatio(jsmVsLib),
        pass: jsmVsLib >= 15,
      },
    ],
  };
}

/** The counter-clock move's target: library ÷ floor. */
const MOVE_TARGET = 1.05;

/**
 * Who decides the counter-clock move's target. Wall time decides when the pairs' quartiles lie
 * on one side of it; when they straddle it, the difference is within the machine's noise (a
 * run here passed at 1.03× and another missed at 1.07× on the same code), and instructions per
 * move, counted by callgrind against the same floor, decide: they repeat to about ±1.5%.
 * The wall-time ratio is printed either way.
 */
async function counterMoveVerdict(f: RowFigures): Promise<{ decidedBy: string; measured: string; pass: boolean }> {
  const wall = `wall ${formatRatio(f.ratio)} (pairs p25–p75 ${formatRatio(f.ratioP25)} – ${formatRatio(f.ratioP75)}, processes ${spread(f)})`;
  if (f.ratioP75 <= MOVE_TARGET || f.ratioP25 > MOVE_TARGET)
    return { decidedBy: 'wall time', measured: wall, pass: f.ratio <= MOVE_TARGET };
  const missing = valgrindMissing();
  if (missing !== undefined)
    return { decidedBy: 'wall time (callgrind unavailable)', measured: `${wall}; ${missing}`, pass: false };
  // --quick: fewer cycles, so the count is less steady (JIT work left from the warm-up shows).
  const warmup = scaled(100_000, 20_000);
  const cycles = scaled(300_000, 40_000);
  const floor = await instructionsPerMove('floor:counter', warmup, cycles);
  const library = await instructionsPerMove('library:counter', warmup, cycles);
  const ratio = library / floor;
  console.log(
    `  counter-clock move: wall time within noise of ${formatRatio(MOVE_TARGET)}; callgrind: floor ${floor.toFixed(0)}, library ${library.toFixed(0)} instructions/move`,
  );
  return {
    decidedBy: 'instructions (callgrind; wall time within noise)',
    measured: `${formatRatio(ratio)} instructions/move (library ${library.toFixed(0)}, floor ${floor.toFixed(0)}, ${cycles.toLocaleString('en-US')} cycles); ${wall}`,
    pass: ratio <= MOVE_TARGET,
  };
}

function parseTable(argv: readonly string[]): ClockKind | undefined {
  const i = argv.indexOf('--table');
  if (i === -1) return undefined;
  const name = argv[i + 1];
  if (name !== 'date' && name !== 'counter') throw new Error(`--table must be date or counter, got ${String(name)}`);
  return name;
}

if (require.main === module) {
  const table = parseTable(process.argv.slice(2));
  if (table !== undefined && process.argv.includes('--child')) {
    serveChild(() => measureTable(table));
  } else if (table !== undefined) {
    buildCandidates()
      .then(() => measureTable(table))
      .then((s) => {
        for (const [id, r] of Object.entries(s.rows))
          console.log(
            `${id.padEnd(12)} ${formatNs(median(r.ns))}/move  ${formatRatio(median(r.ratios))} floor  (pairs p25 ${formatRatio(quantile(r.ratios, 0.25))}, p75 ${formatRatio(quantile(r.ratios, 0.75))})`,
          );
      }, failed);
  } else {
    run().then(printSuite, failed);
  }
}

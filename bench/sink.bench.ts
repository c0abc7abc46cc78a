// The JSON Lines history sink, per move: what `JsonlHistorySink` adds to a move, in each
// durability mode, and with group commit when the build has it.
//
// Two machines make the same moves (the tool-use turn, repeated; default logger, history
// 100), one with a sink, one without; samples alternate between them in one process, and the
// sink's cost per move is the median over pairs of (with − without). Each mode writes its own
// file in a fresh temporary directory, removed afterwards.
//
// Each mode is measured in fresh processes of its own (BENCH_ROUNDS, default 3): its figures
// are over the pairs of all of them, and the range of the processes' own medians is shown.
//
// Each mode is also timed against a floor, in the same process, sample by sample: the machine
// without a sink plus the bare system calls the mode promises — one write(2) of a line of the
// same size per move, and fsync(2) per turn ('turn') or per line ('move'). Group commit's floor
// is an append stream with no guarantees: a sink that JSON.stringify's each record and writes
// the same batches (a turn's lines, or maxLines) with one writeSync, with no checks, no
// rollback and no fsync. Targets: each durability mode ≤ 1.15× its floor; group commit's
// throughput ≥ 0.8× its floor's.
//
// Durability modes ('none', 'turn': fsync when a turn ends, 'move': fsync every line) and
// group commit are options of `JsonlHistorySink.open`; a build that does not know an option
// rejects a bad value of it with InvalidArgumentError only if it checks it, so the suite asks
// first (an invalid value must be refused) and reports a mode as unavailable otherwise.
//
//   npm run bench -- sink            through the runner
//   npx tsx bench/sink.bench.ts      alone
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CYCLE, MOVES_PER_CYCLE, START } from './cycle';
import type { HistorySink, TransitionRecord } from '../lib/index';
import {
  failed,
  formatNs,
  formatRatio,
  formatRatioFigure,
  median,
  printSuite,
  quantile,
  ratioFigure,
  ratioTarget,
  runInChild,
  scaled,
  serveChild,
  type SuiteResult,
  type TargetCheck,
} from './harness';
import { describeLibrary, loadLibrary } from './library';

const TARGET_MODE_RATIO = 1.15;
const TARGET_GROUP_THROUGHPUT = 0.8;
/** Group commit's default batch bound (JsonlHistorySink's `maxLines`). */
const GROUP_MAX_LINES = 4096;

interface Mode {
  readonly name: string;
  readonly label: string;
  readonly options: Record<string, unknown>;
  /** The option to probe: an invalid value must be refused for the mode to count as supported. */
  readonly probe?: Record<string, unknown>;
  readonly cyclesPerSample: number;
  readonly samples: number;
  /** The floor's fsync: none, once per turn, or after every line. */
  readonly floorSync: 'none' | 'turn' | 'move';
  /** The floor batches lines as group commit does, instead of one write per line. */
  readonly floorGroup?: boolean;
}

const MODES: readonly Mode[] = [
  {
    name: 'default',
    label: 'sink, default options',
    options: {},
    cyclesPerSample: 10,
    samples: scaled(61, 15),
    floorSync: 'turn',
  },
  {
    name: 'none',
    label: "durability 'none' (no fsync)",
    options: { durability: 'none' },
    probe: { durability: 'bogus' },
    cyclesPerSample: 100,
    samples: scaled(151, 41),
    floorSync: 'none',
  },
  {
    name: 'turn',
    label: "durability 'turn' (fsync per turn)",
    options: { durability: 'turn' },
    probe: { durability: 'bogus' },
    cyclesPerSample: 10,
    samples: scaled(61, 15),
    floorSync: 'turn',
  },
  {
    name: 'move',
    label: "durability 'move' (fsync per line)",
    options: { durability: 'move' },
    probe: { durability: 'bogus' },
    cyclesPerSample: 2,
    samples: scaled(31, 9),
    floorSync: 'move',
  },
  // Group commit decides when lines are written, durability when they are fsync'ed: the
  // target is group commit alone (no fsync); beside it, group commit with one fsync per turn.
  {
    name: 'group',
    label: "group commit, durability 'none'",
    options: { groupCommit: true, durability: 'none' },
    probe: { groupCommit: 'bogus' },
    cyclesPerSample: 100,
    samples: scaled(151, 41),
    floorSync: 'none',
    floorGroup: true,
  },
  {
    name: 'group-turn',
    label: "group commit, durability 'turn'",
    options: { groupCommit: true, durability: 'turn' },
    probe: { groupCommit: 'bogus' },
    cyclesPerSample: 5,
    samples: scaled(41, 15),
    floorSync: 'turn',
    floorGroup: true,
  },
];

/** What one process measured of a mode. */
interface ModeSample {
  readonly supported: boolean;
  /** (machine with sink − machine without), ns per move, one per round of samples. */
  readonly diffs: number[];
  /** The machine with the sink, ns per move, one per round. */
  readonly withNs: number[];
  /** (machine + sink) ÷ (machine + floor), one per round. */
  readonly ratios: number[];
  readonly lines: number;
  readonly bytes: number;
}

interface ModeFigures {
  readonly mode: Mode;
  readonly supported: boolean;
  readonly nsPerMove?: number;
  readonly p25?: number;
  readonly p75?: number;
  readonly linesPerSecond?: number;
  readonly bytesPerLine?: number;
  /** (machine + sink) ÷ (machine + floor), one per pair of samples, of every process. */
  readonly ratios?: readonly number[];
  /** The median ratio of each process. */
  readonly perProcess?: readonly number[];
}

function supported(mode: Mode, dir: string): boolean {
  if (mode.probe === undefined) return true;
  const { JsonlHistorySink, InvalidArgumentError } = loadLibrary();
  const file = path.join(dir, `probe-${mode.name}.jsonl`);
  try {
    JsonlHistorySink.open(file, { ...mode.probe, overwrite: true }).close();
    return false;
  } catch (error) {
    return error instanceof InvalidArgumentError;
  }
}

/**
 * The floor of a mode: what its promise needs from the system and nothing more. Per move, a
 * write of `line` (or, batching as group commit does, the lines of a turn in one write, each
 * serialized with JSON.stringify), and the mode's fsyncs.
 */
function floorSink(mode: Mode, fd: number, line: string): HistorySink {
  const terminal = 'EndOfTurn';
  if (mode.floorGroup === true) {
    let pending = '';
    let count = 0;
    return {
      write(record: TransitionRecord): void {
        pending += `${JSON.stringify(record)}\n`;
        if (++count >= GROUP_MAX_LINES || record.to === terminal) {
          writeSync(fd, pending);
          if (mode.floorSync !== 'none') fsyncSync(fd);
          pending = '';
          count = 0;
        }
      },
    };
  }
  return {
    write(record: TransitionRecord): void {
      writeSync(fd, line);
      if (mode.floorSync === 'move' || (mode.floorSync === 'turn' && record.to === terminal)) fsyncSync(fd);
    },
  };
}

function measureMode(mode: Mode, dir: string): ModeSample {
  if (!supported(mode, dir)) return { supported: false, diffs: [], withNs: [], ratios: [], lines: 0, bytes: 0 };
  const { JsonlHistorySink, StateMachine } = loadLibrary();
  const file = path.join(dir, `${mode.name}.jsonl`);
  const sink = JsonlHistorySink.open(file, { runId: 'bench', overwrite: true, ...mode.options } as Parameters<
    typeof JsonlHistorySink.open
  >[1]);
  const withSink = new StateMachine({ sink });
  const without = new StateMachine();
  for (const m of [withSink, without]) m.transition(START.to, START.description);
  const to = CYCLE.map((c) => c.to);
  const descriptions = CYCLE.map((c) => c.description);
  const sample = (m: typeof without, cycles: number): number => {
    const t0 = process.hrtime.bigint();
    for (let c = 0; c < cycles; c++) for (let i = 0; i < MOVES_PER_CYCLE; i++) m.transition(to[i]!, descriptions[i]!);
    return Number(process.hrtime.bigint() - t0) / (cycles * MOVES_PER_CYCLE);
  };
  for (let i = 0; i < Math.min(20, mode.samples); i++) {
    sample(withSink, mode.cyclesPerSample);
    sample(without, mode.cyclesPerSample);
  }
  // The floor writes lines as long as the sink's, to a file of its own opened for append.
  sink.flush?.();
  const lineBytes = Math.max(2, Math.round(statSync(file).size / Math.max(1, sink.linesWritten)));
  const floorFile = path.join(dir, `${mode.name}-floor.jsonl`);
  const fd = openSync(floorFile, 'a');
  const floor = new StateMachine({ sink: floorSink(mode, fd, `${'x'.repeat(lineBytes - 1)}\n`) });
  floor.transition(START.to, START.description);
  for (let i = 0; i < Math.min(20, mode.samples); i++) sample(floor, mode.cyclesPerSample);
  const diffs: number[] = [];
  const withNs: number[] = [];
  const ratios: number[] = [];
  try {
    for (let s = 0; s < mode.samples; s++) {
      // Rotate the order of the three sides, so none always follows another's writes.
      const times: Record<'with' | 'without' | 'floor', number> = { with: 0, without: 0, floor: 0 };
      const order = (['with', 'without', 'floor'] as const).map((_, j, all) => all[(j + s) % 3]!);
      for (const side of order)
        times[side] = sample(side === 'with' ? withSink : side === 'without' ? without : floor, mode.cyclesPerSample);
      withNs.push(times.with);
      diffs.push(times.with - times.without);
      ratios.push(times.with / times.floor);
    }
  } finally {
    closeSync(fd);
    rmSync(floorFile, { force: true });
  }
  sink.close();
  const lines = sink.linesWritten;
  const bytes = statSync(file).size;
  rmSync(file, { force: true });
  return { supported: true, diffs, withNs, ratios, lines, bytes };
}

/** A mode measured in `rounds` fresh processes: every process's pairs together, and each one's median ratio. */
async function measureModeInProcesses(mode: Mode, rounds: number): Promise<ModeFigures> {
  const samples: ModeSample[] = [];
  for (let r = 0; r < rounds; r++)
    samples.push(await runInChild<ModeSample>(__filename, ['--mode', mode.name, '--child']));
  if (samples.some((s) => !s.supported)) return { mode, supported: false };
  const diffs = samples.flatMap((s) => s.diffs);
  return {
    mode,
    supported: true,
    nsPerMove: median(diffs),
    p25: quantile(diffs, 0.25),
    p75: quantile(diffs, 0.75),
    linesPerSecond: 1e9 / median(samples.flatMap((s) => s.withNs)),
    bytesPerLine: samples.reduce((n, s) => n + s.bytes, 0) / samples.reduce((n, s) => n + s.lines, 0),
    ratios: samples.flatMap((s) => s.ratios),
    perProcess: samples.map((s) => median(s.ratios)),
  };
}

/** The child side: one mode, measured in a temporary directory of its own. */
function measureModeHere(name: string): ModeSample {
  const mode = MODES.find((m) => m.name === name);
  if (mode === undefined) throw new Error(`--mode must be one of ${MODES.map((m) => m.name).join(', ')}, got ${name}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'asm-bench-sink-'));
  try {
    return measureMode(mode, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// For scale: what one write(2) of a line of the same size costs on this machine, with no
// machine and no serialization, to a file opened for append as the sink's is. Every mode but
// group commit makes one such write per move, so this is the floor under the 'none' figure.
function measureBareWrite(dir: string, bytesPerLine: number): { ns: number; p25: number; p75: number } {
  const file = path.join(dir, 'bare-write.jsonl');
  const fd = openSync(file, 'a');
  const line = `${'x'.repeat(Math.max(1, Math.round(bytesPerLine) - 1))}\n`;
  const perSample = 100 * MOVES_PER_CYCLE;
  const ns: number[] = [];
  try {
    for (let s = 0; s < 171; s++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < perSample; i++) writeSync(fd, line);
      if (s >= 20) ns.push(Number(process.hrtime.bigint() - t0) / perSample);
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  return { ns: median(ns), p25: quantile(ns, 0.25), p75: quantile(ns, 0.75) };
}

export async function run(rounds = Number(process.env.BENCH_ROUNDS ?? scaled(3, 1))): Promise<SuiteResult> {
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`BENCH_ROUNDS must be a positive integer, got ${String(process.env.BENCH_ROUNDS)}`);
  console.log(
    `  library under test: ${describeLibrary()}; the sink's cost = (machine with sink − machine without), alternating samples; each mode in ${rounds} fresh processes`,
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'asm-bench-sink-'));
  const figures: ModeFigures[] = [];
  let bare: { ns: number; p25: number; p75: number; bytes: number } | undefined;
  try {
    for (const mode of MODES) {
      const f = await measureModeInProcesses(mode, rounds);
      figures.push(f);
      console.log(
        f.supported
          ? `  ${mode.label}: ${formatNs(f.nsPerMove!)}/move (p25 ${formatNs(f.p25!)}, p75 ${formatNs(f.p75!)}); ÷ floor per process ${f.perProcess!.map(formatRatio).join(', ')}`
          : `  ${mode.label}: not available in this build`,
      );
    }
    const lineBytes = figures.find((f) => f.supported)?.bytesPerLine ?? 152;
    bare = { ...measureBareWrite(dir, lineBytes), bytes: Math.round(lineBytes) };
    console.log(
      `  for scale, writeSync of a ${bare.bytes}-byte line alone: ${formatNs(bare.ns)}/line (p25 ${formatNs(bare.p25)}, p75 ${formatNs(bare.p75)})`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const row = (f: ModeFigures): SuiteResult['rows'][number] =>
    f.supported
      ? {
          label: f.mode.label,
          cells: [
            formatNs(f.nsPerMove!),
            `${formatNs(f.p25!)} – ${formatNs(f.p75!)}`,
            `${(f.linesPerSecond! / 1e6).toFixed(2)} M`,
            f.bytesPerLine!.toFixed(0),
            formatRatioFigure(ratioFigure(f.ratios!)),
          ],
        }
      : { label: f.mode.label, cells: ['n/a', 'not in this build', '', '', ''] };
  const targets: SuiteResult['targets'][number][] = [];
  for (const f of figures) {
    if (!f.supported) {
      targets.push({
        name: `JSONL sink, ${f.mode.label}`,
        goal: 'available',
        measured: 'not in this build',
        pass: false,
      });
      continue;
    }
    const ratio = ratioFigure(f.ratios!);
    if (f.mode.floorGroup === true) {
      // Throughput: the floor's time per move over the sink's (higher is better).
      const throughput = ratioFigure(f.ratios!.map((r) => 1 / r));
      if (f.mode.floorSync === 'none')
        targets.push(
          withProcesses(
            ratioTarget(
              `JSONL sink, ${f.mode.label}: throughput ÷ floor`,
              throughput,
              TARGET_GROUP_THROUGHPUT,
              '(floor: the same batches from JSON.stringify, one writeSync each, no guarantees)',
              true,
            ),
            f.perProcess!.map((r) => 1 / r),
          ),
        );
      else
        console.log(
          `  ${f.mode.label}: throughput ÷ its floor (same batches + fsync per turn) ${formatRatio(throughput.median)}`,
        );
    } else {
      const promise =
        f.mode.floorSync === 'none'
          ? 'one write per line'
          : f.mode.floorSync === 'turn'
            ? 'one write per line + fsync per turn'
            : 'write + fsync per line';
      targets.push(
        withProcesses(
          ratioTarget(
            `JSONL sink, ${f.mode.name === 'default' ? 'default options' : f.mode.label}: move ÷ floor`,
            ratio,
            TARGET_MODE_RATIO,
            `(floor: a bare machine + ${promise})`,
          ),
          f.perProcess!,
        ),
      );
    }
  }
  return {
    suite: 'sink',
    columns: [
      'sink cost /move',
      'pairs p25 – p75',
      'lines/s (machine + sink)',
      'bytes/line',
      '(machine + sink) ÷ floor',
    ],
    rows: [
      ...figures.map(row),
      {
        label: `for scale: writeSync of a ${bare!.bytes}-byte line, nothing else (one write per move is the floor of every mode but group commit)`,
        cells: [
          formatNs(bare!.ns),
          `${formatNs(bare!.p25)} – ${formatNs(bare!.p75)}`,
          `${(1e9 / bare!.ns / 1e6).toFixed(2)} M`,
          String(bare!.bytes),
          '',
        ],
      },
    ],
    targets,
  };
}

/** A target's figure with the range of the processes' own medians after it. */
function withProcesses(target: TargetCheck, perProcess: readonly number[]): TargetCheck {
  const range = `${formatRatio(Math.min(...perProcess))} – ${formatRatio(Math.max(...perProcess))}`;
  return { ...target, measured: `${target.measured}; processes ${range}` };
}

if (require.main === module) {
  const i = process.argv.indexOf('--mode');
  if (i !== -1 && process.argv.includes('--child')) serveChild(() => measureModeHere(process.argv[i + 1] ?? ''));
  else run().then(printSuite, failed);
}

// The JSON Lines history sink, per move: what `JsonlHistorySink` adds to a move, in each
// durability mode, and with group commit when the build has it.
//
// Two machines make the same moves (the tool-use turn, repeated; default logger, history
// 100), one with a sink, one without; samples alternate between them in one process, and the
// sink's cost per move is the median over pairs of (with − without). Each mode writes its own
// file in a fresh temporary directory, removed afterwards.
//
// Durability modes ('none', 'turn': fsync when a turn ends, 'move': fsync every line) and
// group commit are options of `JsonlHistorySink.open`; a build that does not know an option
// rejects a bad value of it with InvalidArgumentError only if it checks it, so the suite asks
// first (an invalid value must be refused) and reports a mode as unavailable otherwise.
//
//   npm run bench -- sink            through the runner
//   npx tsx bench/sink.bench.ts      alone
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CYCLE, MOVES_PER_CYCLE, START } from './cycle';
import { failed, formatNs, median, printSuite, quantile, type SuiteResult } from './harness';
import { describeLibrary, loadLibrary } from './library';

const TARGET_NS = 1000;
const TARGET_GROUP_LINES_PER_S = 1_000_000;

interface Mode {
  readonly name: string;
  readonly label: string;
  readonly options: Record<string, unknown>;
  /** The option to probe: an invalid value must be refused for the mode to count as supported. */
  readonly probe?: Record<string, unknown>;
  readonly cyclesPerSample: number;
  readonly samples: number;
}

const MODES: readonly Mode[] = [
  { name: 'default', label: 'sink, default options', options: {}, cyclesPerSample: 100, samples: 151 },
  {
    name: 'none',
    label: "durability 'none' (no fsync)",
    options: { durability: 'none' },
    probe: { durability: 'bogus' },
    cyclesPerSample: 100,
    samples: 151,
  },
  {
    name: 'turn',
    label: "durability 'turn' (fsync per turn)",
    options: { durability: 'turn' },
    probe: { durability: 'bogus' },
    cyclesPerSample: 5,
    samples: 41,
  },
  {
    name: 'move',
    label: "durability 'move' (fsync per line)",
    options: { durability: 'move' },
    probe: { durability: 'bogus' },
    cyclesPerSample: 1,
    samples: 21,
  },
  // Group commit decides when lines are written, durability when they are fsync'ed: the
  // target is group commit alone (no fsync); beside it, group commit with one fsync per turn.
  {
    name: 'group',
    label: "group commit, durability 'none'",
    options: { groupCommit: true, durability: 'none' },
    probe: { groupCommit: 'bogus' },
    cyclesPerSample: 100,
    samples: 151,
  },
  {
    name: 'group-turn',
    label: "group commit, durability 'turn'",
    options: { groupCommit: true, durability: 'turn' },
    probe: { groupCommit: 'bogus' },
    cyclesPerSample: 5,
    samples: 41,
  },
];

interface ModeFigures {
  readonly mode: Mode;
  readonly supported: boolean;
  readonly nsPerMove?: number;
  readonly p25?: number;
  readonly p75?: number;
  readonly linesPerSecond?: number;
  readonly bytesPerLine?: number;
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

function measureMode(mode: Mode, dir: string): ModeFigures {
  if (!supported(mode, dir)) return { mode, supported: false };
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
  const diffs: number[] = [];
  const withNs: number[] = [];
  for (let s = 0; s < mode.samples; s++) {
    const a = s % 2 === 0 ? sample(withSink, mode.cyclesPerSample) : 0;
    const b = sample(without, mode.cyclesPerSample);
    const c = s % 2 === 1 ? sample(withSink, mode.cyclesPerSample) : a;
    withNs.push(c);
    diffs.push(c - b);
  }
  sink.close();
  const lines = sink.linesWritten;
  const bytes = statSync(file).size;
  rmSync(file, { force: true });
  const nsPerMove = median(diffs);
  return {
    mode,
    supported: true,
    nsPerMove,
    p25: quantile(diffs, 0.25),
    p75: quantile(diffs, 0.75),
    linesPerSecond: 1e9 / median(withNs),
    bytesPerLine: bytes / lines,
  };
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

export async function run(): Promise<SuiteResult> {
  console.log(
    `  library under test: ${describeLibrary()}; the sink's cost = (machine with sink − machine without), alternating samples`,
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'asm-bench-sink-'));
  const figures: ModeFigures[] = [];
  let bare: { ns: number; p25: number; p75: number; bytes: number } | undefined;
  try {
    for (const mode of MODES) {
      const f = measureMode(mode, dir);
      figures.push(f);
      console.log(
        f.supported
          ? `  ${mode.label}: ${formatNs(f.nsPerMove!)}/move (p25 ${formatNs(f.p25!)}, p75 ${formatNs(f.p75!)})`
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
          ],
        }
      : { label: f.mode.label, cells: ['n/a', 'not in this build', '', ''] };
  const byName = (n: string): ModeFigures => figures.find((f) => f.mode.name === n)!;
  const none = byName('none').supported ? byName('none') : byName('default');
  const group = byName('group');
  return {
    suite: 'sink',
    columns: ['sink cost /move', 'pairs p25 – p75', 'lines/s (machine + sink)', 'bytes/line'],
    rows: [
      ...figures.map(row),
      {
        label: `for scale: writeSync of a ${bare!.bytes}-byte line, nothing else (one write per move is the floor of every mode but group commit)`,
        cells: [
          formatNs(bare!.ns),
          `${formatNs(bare!.p25)} – ${formatNs(bare!.p75)}`,
          `${(1e9 / bare!.ns / 1e6).toFixed(2)} M`,
          String(bare!.bytes),
        ],
      },
    ],
    targets: [
      {
        name: `JSONL sink per move, no fsync (${none.mode.name})`,
        goal: `≤ ${formatNs(TARGET_NS)}`,
        measured: `${formatNs(none.nsPerMove!)} (p25–p75 ${formatNs(none.p25!)} – ${formatNs(none.p75!)}; one bare writeSync of the line: ${formatNs(bare!.ns)})`,
        pass: none.nsPerMove! <= TARGET_NS,
      },
      group.supported
        ? {
            name: 'JSONL sink, group commit',
            goal: '≥ 1 M lines/s',
            measured: `${(group.linesPerSecond! / 1e6).toFixed(2)} M lines/s`,
            pass: group.linesPerSecond! >= TARGET_GROUP_LINES_PER_S,
          }
        : {
            name: 'JSONL sink, group commit',
            goal: '≥ 1 M lines/s',
            measured: 'not available in this build',
            pass: false,
          },
    ],
  };
}

if (require.main === module) run().then(printSuite, failed);

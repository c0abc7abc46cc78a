// Shared pieces of the benchmark suites: the result shape the runner prints, the child
// processes that keep candidates apart, and formatting. Nothing here is part of the library.
import { fork } from 'node:child_process';
import path from 'node:path';
import { medianInterval } from './medianInterval';

/** The package root: children run from here so that `--import tsx` resolves. */
export const ROOT = path.resolve(__dirname, '..');

/** One target of issue 6, checked against a measured figure. */
export interface TargetCheck {
  /** What is measured, e.g. `move vs floor`. */
  readonly name: string;
  /** The goal, as people read it, e.g. `≤ 1.30×`. */
  readonly goal: string;
  /** The measured figure, formatted, e.g. `1.12×`. */
  readonly measured: string;
  readonly pass: boolean;
  /**
   * The goal lies inside the interval that holds the median ratio with 90% confidence
   * (`medianInterval`): the samples cannot tell a pass from a miss, and a second run of the same
   * code could read either. Said as UNSETTLED, never as PASS or MISS.
   */
  readonly unsettled?: boolean;
}

/** What a target's line and the summary say of it. */
export function verdict(t: TargetCheck): 'PASS' | 'MISS' | 'UNSETTLED' {
  return t.unsettled === true ? 'UNSETTLED' : t.pass ? 'PASS' : 'MISS';
}

/** A line of a suite's own table: a label and its formatted cells. */
export interface ResultRow {
  readonly label: string;
  readonly cells: readonly string[];
}

/** What a suite's `run()` returns to the runner (`bench/index.ts`). */
export interface SuiteResult {
  readonly suite: string;
  /** Column headers for `rows` (not counting the label column). */
  readonly columns: readonly string[];
  readonly rows: readonly ResultRow[];
  readonly targets: readonly TargetCheck[];
}

/**
 * Runs `file` in a fresh Node process (TypeScript through tsx, plus `execArgv`) and resolves
 * with the one message it sends back with `process.send`. Its stdout and stderr go to ours.
 * A fresh process per measurement keeps JIT feedback, heap and GC state of one candidate
 * from leaking into another's figures.
 */
export function runInChild<T>(
  file: string,
  args: readonly string[] = [],
  execArgv: readonly string[] = [],
  /** Another Node binary to run it with (a suite that needs a newer Node than the runner's). */
  execPath?: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    // The machine's default logger must be at its default level ('warn') in every child.
    delete env.AGENT_SM_LOG_LEVEL;
    const child = fork(file, [...args], {
      execArgv: [...execArgv, '--import', 'tsx'],
      env,
      cwd: ROOT,
      stdio: 'inherit',
      ...(execPath === undefined ? {} : { execPath }),
    });
    let message: { ok: true; value: T } | { ok: false; error: string } | undefined;
    child.on('message', (m) => {
      message = m as typeof message;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (message?.ok === true) resolve(message.value);
      else if (message?.ok === false) reject(new Error(`${file} ${args.join(' ')} failed: ${message.error}`));
      else reject(new Error(`${file} ${args.join(' ')} exited (${signal ?? code}) without a result`));
    });
  });
}

/**
 * The child side of `runInChild`: runs `work`, sends its result to the parent and exits.
 * Returns false (and does nothing) when this process was not started by `runInChild`.
 */
export function serveChild<T>(work: () => Promise<T> | T): boolean {
  if (typeof process.send !== 'function') return false;
  const send = process.send.bind(process);
  Promise.resolve()
    .then(work)
    .then(
      (value) => send({ ok: true, value }, () => process.exit(0)),
      (error: unknown) => {
        send({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }, () =>
          process.exit(1),
        );
      },
    );
  return true;
}

/** For a suite's entry point: print what went wrong and fail the process. */
export function failed(error: unknown): void {
  console.error(error);
  process.exitCode = 1;
}

/** The heap in use after collecting garbage; needs `node --expose-gc` (runInChild passes it). */
export function heapAfterGc(): number {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  // Twice: the first pass can leave work (weak callbacks, finalizers) for the second.
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function formatNs(ns: number): string {
  if (ns >= 10_000) return `${(ns / 1000).toFixed(1)} µs`;
  if (ns >= 1000) return `${(ns / 1000).toFixed(2)} µs`;
  return `${ns.toFixed(1)} ns`;
}

export function formatBytes(bytes: number): string {
  const sign = bytes < 0 ? '-' : '';
  const abs = Math.abs(bytes);
  if (abs >= 1024 * 1024) return `${sign}${(abs / 1024 / 1024).toFixed(2)} MiB`;
  if (abs >= 1024) return `${sign}${(abs / 1024).toFixed(1)} KiB`;
  return `${sign}${abs.toFixed(0)} B`;
}

export function formatRatio(ratio: number): string {
  return `${ratio >= 100 ? ratio.toFixed(0) : ratio.toFixed(2)}×`;
}

/** A plain-text table with aligned columns: first column left, the rest right. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Prints a suite's own table. */
export function printSuite(result: SuiteResult): void {
  console.log(
    formatTable(
      ['', ...result.columns],
      result.rows.map((r) => [r.label, ...r.cells]),
    ),
  );
  for (const t of result.targets) console.log(`  ${verdict(t)}  ${t.name}: ${t.measured} (target ${t.goal})`);
}

/** The q-quantile (0 ≤ q ≤ 1) of `values`, interpolated between neighbours. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new RangeError('quantile of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * `npm run bench -- --quick` sets BENCH_QUICK=1 for every suite: fewer samples and smaller
 * files, so that a developer checking one change has every suite's figures in under two
 * minutes. The full run stays the reference; its figures are those of docs/benchmarks.md.
 */
export const QUICK = process.env.BENCH_QUICK === '1';

/** `full` in a full run, `quick` in a quick one. */
export function scaled<T>(full: T, quick: T): T {
  return QUICK ? quick : full;
}

/** A ratio's samples (each the ratio of one sample to its floor's sample taken beside it). */
export interface RatioFigure {
  readonly median: number;
  readonly p25: number;
  readonly p75: number;
  readonly n: number;
  /** The interval that holds the median with 90% confidence, from the samples alone (`medianInterval`). */
  readonly low: number;
  readonly high: number;
}

export function ratioFigure(ratios: readonly number[]): RatioFigure {
  return {
    median: median(ratios),
    p25: quantile(ratios, 0.25),
    p75: quantile(ratios, 0.75),
    n: ratios.length,
    ...medianInterval(ratios),
  };
}

/** `1.07× (p25–p75 1.05× – 1.09×, 41 pairs)` */
export function formatRatioFigure(f: RatioFigure): string {
  return `${formatRatio(f.median)} (p25–p75 ${formatRatio(f.p25)} – ${formatRatio(f.p75)}, ${f.n} pairs)`;
}

/** Whether the interval that holds the median of `f` is clear of `limit` (a ≤ target; with `atLeast`, a ≥ one): its samples can tell which side the median is on. */
function clearOf(f: RatioFigure, limit: number, atLeast = false): boolean {
  // A figure exactly at the limit meets it (a count of 1.50× for ≤ 1.50×): it is on the passing side.
  return atLeast ? f.low >= limit || f.high < limit : f.high <= limit || f.low > limit;
}

/**
 * A target on a ratio to a floor timed in the same run: PASS when the median ratio is at most
 * (or, with `atLeast`, at least) `goal`; UNSETTLED when the goal lies inside the median's 90%
 * interval, as the samples then cannot tell (a verdict that flips between two runs of one
 * commit is no verdict). `floor` names what the ratio is to, for the reader.
 */
export function ratioTarget(name: string, f: RatioFigure, goal: number, floor: string, atLeast = false): TargetCheck {
  const unsettled = !clearOf(f, goal, atLeast);
  return {
    name,
    goal: `${atLeast ? '≥' : '≤'} ${formatRatio(goal)} ${floor}`,
    measured: `${formatRatioFigure(f)}${unsettled ? `; the median's 90% interval, ${formatRatio(f.low)} – ${formatRatio(f.high)}, holds the target` : ''}`,
    pass: atLeast ? f.median >= goal : f.median <= goal,
    unsettled,
  };
}

import { formatUsd } from '../internal/formatUsd';
import { formatSpend, formatSpendCell, mergeUncertain } from '../internal/formatSpend';
import { formatDuration } from '../internal/formatDuration';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { RUN_OUTCOMES, type BatchReport } from './runBatch';
import type { UsageTotals } from '../agent/UsageTotals';
import { LIMIT_ROWS, limitUsed } from '../internal/fieldLists';
import { LIMITS } from '../internal/limits';
import { cut, oneLine, plural } from '../internal/text';
import { escapeControl } from '../internal/escapeControl';
import { describeResume } from './describeResume';
import type { CapRaise } from './raises/CapRaises';

/** Options of `formatBatchReport`: how many of the slowest and of the failed runs to list. */
export interface FormatBatchReportOptions {
  /** How many of the slowest runs to list. Default 5. */
  slowest?: number;
  /** How many runs that did not end normally to list, with why and their history file. Default 10. */
  failures?: number;
}

/**
 * A batch report for people: runs per outcome, spend against the caps, run durations, the
 * slowest runs, and the runs that did not end normally with why and where their history is.
 * Pure: the same report gives the same text.
 */
export function formatBatchReport(report: BatchReport, options: FormatBatchReportOptions = {}): string {
  assertReport(report);
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  const { slowest = 5, failures = 10 } = options;
  assertCount(slowest, 'slowest');
  assertCount(failures, 'failures');
  const { runs, totals, concurrency } = report;
  const out: string[] = [];

  out.push(
    `Batch of ${plural(runs.length, 'run')}, concurrency ${concurrency}, in ${formatDuration(report.durationMs)}`,
  );
  if (report.stopped !== undefined) out.push(`Stopped early: ${report.stopped.message}`);

  out.push('', 'Runs by outcome');
  out.push(
    // A report from before an outcome existed (stalled) counts none of it.
    ...table(
      [...RUN_OUTCOMES.map((o) => [o, String(totals.outcomes[o] ?? 0)]), ['total', String(runs.length)]],
      ['l', 'r'],
    ),
  );

  out.push(...resumedLines(runs));
  out.push(...approvalLines(runs));
  out.push(...raiseLines(report));

  out.push('', 'Spend against the caps');
  out.push(
    ...table(
      [['', 'used', 'batch cap', 'per-run cap'], ...spendRows(totals, report.durationMs, capsInForce(report))],
      ['l', 'r', 'r', 'r'],
    ),
  );
  // The cost row counts billed + uncertain, as the cap does: the figures apart, and why money is uncertain.
  out.push(
    `  Money: ${formatSpend({
      ...totals,
      uncertain: mergeUncertain(runs.map((r) => r.uncertain)),
      unpriced: mergeUncertain(runs.map((r) => r.unpriced)),
    })}`,
  );

  const started = runs.filter((r) => r.outcome !== 'skipped');
  if (started.length > 0) {
    const ms = started.map((r) => r.durationMs).sort((a, b) => a - b);
    out.push(
      '',
      `Durations of the ${plural(started.length, 'run')} that started: median ${formatDuration(percentile(ms, 0.5))}, ` +
        `p90 ${formatDuration(percentile(ms, 0.9))}, max ${formatDuration(ms[ms.length - 1]!)}`,
    );
    if (slowest > 0) {
      const rows = [...started]
        .sort((a, b) => b.durationMs - a.durationMs)
        .slice(0, slowest)
        .map((r) => [
          r.id,
          formatDuration(r.durationMs),
          r.outcome,
          formatSpendCell(r.usage),
          plural(r.usage.llmCalls, 'LLM call'),
          plural(r.transitions, 'move'),
        ]);
      out.push('', `Slowest ${plural(rows.length, 'run')}`, ...table(rows, ['l', 'r', 'l', 'r', 'r', 'r']));
    }
  }

  const failed = runs.filter(
    (r) => r.outcome !== 'end_of_turn' && r.outcome !== 'wrapped_up' && r.outcome !== 'skipped',
  );
  if (failed.length > 0 && failures > 0) {
    const shown = failed.slice(0, failures);
    const more = failed.length > shown.length ? ` (first ${shown.length})` : '';
    out.push('', `Runs that did not end normally: ${failed.length}${more}`);
    for (const run of shown) {
      out.push(`  ${run.id}  ${run.outcome}: ${cut(oneLine(run.error?.message ?? 'no reason recorded'), 160)}`);
      if (run.historyFile !== undefined) out.push(`    history: ${run.historyFile}`);
      if (run.historyError !== undefined)
        out.push(`    history incomplete: ${cut(oneLine(run.historyError.message), 160)}`);
    }
  }
  // Every line is one line: ids, messages and paths from the run are shown escaped.
  return out.map(escapeControl).join('\n');
}

/** The most resumed runs listed one by one; the counts cover them all. */
const RESUMED_SHOWN = 20;

/**
 * With `resume`: how many runs had finished earlier, recovered from their journal, restarted,
 * or are new, and for each run that went on from an earlier attempt, how.
 */
function resumedLines(runs: BatchReport['runs']): string[] {
  if (!runs.some((r) => r.resumed !== undefined)) return [];
  const count = { finished: 0, recovered: 0, restarted: 0, new: 0 };
  for (const run of runs) count[run.resumed ?? 'new'] += 1;
  const out = [
    '',
    `Resumed: ${count.finished} finished earlier (not run again), ${count.recovered} recovered from their journal, ` +
      `${count.restarted} restarted, ${count.new} new`,
  ];
  const again = runs.filter((r) => r.resumed === 'recovered' || r.resumed === 'restarted');
  for (const run of again.slice(0, RESUMED_SHOWN)) out.push(`  ${run.id}  ${describeResume(run)}`);
  if (again.length > RESUMED_SHOWN) out.push(`  and ${again.length - RESUMED_SHOWN} more`);
  // Salvaged files lost lines: every one is named, as a person will want to look at each.
  for (const run of runs)
    if (run.salvaged !== undefined)
      out.push(
        `  ${run.id}  salvaged ${run.salvaged.file}: skipped ${plural(run.salvaged.skippedLines.length, 'corrupt line')} (${run.salvaged.skippedLines.join(', ')})`,
      );
  return out;
}

/** The most parked runs listed one by one; the counts cover them all. */
const PARKED_SHOWN = 20;

/** A pausing cap (`total.whenSpent: 'pause'`): its raises, and the runs that parked at it. */
function raiseLines(report: BatchReport): string[] {
  const { raises } = report;
  if (raises === undefined) return [];
  const parked = report.runs.filter((r) => r.capWait !== undefined);
  const waitedMs = parked.reduce((sum, r) => sum + r.capWait!.waitedMs, 0);
  const out = [
    '',
    `Paused at the cap: ${plural(parked.length, 'run')} parked, ${formatDuration(waitedMs)} waited in all, ${plural(raises.length, 'raise')}`,
  ];
  for (const r of raises)
    out.push(`  cap raised: ${formatUsd(r.fromUsd)} → ${formatUsd(r.toUsd)} (by ${RAISED_BY[r.by]})`);
  return out;
}

/** The limits, with the batch's dollar cap as its last raise left it. */
function capsInForce(report: BatchReport): BatchReport['limits'] {
  const last = report.raises?.at(-1);
  const { total } = report.limits;
  if (last === undefined || total === undefined) return report.limits;
  return { ...report.limits, total: { ...total, maxCostUsd: last.toUsd } };
}

/** Runs that parked for approval: how many, and for each how often, for how many calls and how long it waited. */
function approvalLines(runs: BatchReport['runs']): string[] {
  const parked = runs.filter((r) => r.approval !== undefined);
  if (parked.length === 0) return [];
  const waitedMs = parked.reduce((sum, r) => sum + r.approval!.waitedMs, 0);
  const out = ['', `Parked for approval: ${plural(parked.length, 'run')}, ${formatDuration(waitedMs)} waited in all`];
  for (const run of parked.slice(0, PARKED_SHOWN)) {
    const { waits, calls, waitedMs: ms } = run.approval!;
    const times = waits === 1 ? '' : ` over ${waits} waits`;
    out.push(`  ${run.id}  waited ${formatDuration(ms)} for ${plural(calls, 'approval')}${times}, then ${run.outcome}`);
  }
  if (parked.length > PARKED_SHOWN) out.push(`  and ${parked.length - PARKED_SHOWN} more`);
  return out;
}

/** One row per limit, in report order: what was used, the batch cap (with its share), the per-run cap. */
function spendRows(totals: UsageTotals, batchMs: number, limits: BatchReport['limits']): string[][] {
  const { total = {}, perRun = {} } = limits;
  // The batch cap on wall time is on elapsed time; the runs' own time in turns adds up to more when they overlap.
  const usage: UsageTotals = { ...totals, wallMs: batchMs };
  return LIMIT_ROWS.map((limit) => {
    const { label, cell } = LIMITS[limit];
    const used = limitUsed(usage, limit);
    const cap = total[limit];
    const per = perRun[limit];
    return [
      label,
      cell(used),
      cap === undefined ? '—' : cap > 0 ? `${cell(cap)} (${Math.round((used / cap) * 100)}%)` : cell(cap),
      per === undefined ? '—' : cell(per),
    ];
  });
}

/** Columns padded to their widest cell, indented two spaces. */
function table(rows: string[][], align: Array<'l' | 'r'>): string[] {
  const widths = align.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((row) =>
    `  ${row.map((cell, c) => (align[c] === 'r' ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ')}`.trimEnd(),
  );
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

function assertCount(value: unknown, name: string): void {
  if (!(typeof value === 'number' && Number.isInteger(value) && value >= 0))
    throw new InvalidArgumentError(name, 'a non-negative integer', value);
}

/** The fields formatBatchReport reads, checked up front so a wrong argument is named, not a TypeError. */
function assertReport(report: unknown): asserts report is BatchReport {
  const expected = 'a BatchReport from runBatch()';
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(report)) throw new InvalidArgumentError('report', expected, report);
  const { runs, totals, limits } = report;
  if (!Array.isArray(runs)) throw new InvalidArgumentError('report.runs', 'an array of run reports', runs);
  runs.forEach((run: unknown, i) => {
    if (!isObject(run) || typeof run.outcome !== 'string' || !isObject(run.usage))
      throw new InvalidArgumentError(`report.runs[${i}]`, 'a run report { id, outcome, usage, durationMs, ... }', run);
  });
  if (!isObject(totals) || !isObject(totals.outcomes))
    throw new InvalidArgumentError('report.totals', 'usage totals with `outcomes`', totals);
  if (!isObject(limits)) throw new InvalidArgumentError('report.limits', 'an object { perRun?, total? }', limits);
}

/** Who raised a cap, in words. */
const RAISED_BY: Readonly<Record<CapRaise['by'], string>> = {
  handle: 'the handle',
  folder: 'the folder',
  store: 'the store',
  redis: 'raiseBatch',
};

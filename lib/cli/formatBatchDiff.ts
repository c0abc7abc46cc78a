import type { BatchDiff, BatchDiffTotals, TaskPair, TaskSide } from '../batch/reading/diffBatches';
import type { DivergenceKind } from '../history/diffStep';
import { escapeControl } from '../internal/escapeControl';
import { formatSpend, formatSpendCell } from '../internal/formatSpend';
import { cut, oneLine, plural } from '../internal/text';
import { formatChange, formatDelta } from '../internal/formatDelta';

/** Where the runs of a changed task first diverged, for the tasks it was looked up for. */
export type Divergences = ReadonlyMap<string, DivergenceKind>;

/** Rows listed per section; the rest are counted (`--json` lists every one). */
const ROWS = 50;

/**
 * What `agent-sm diff <folderA> <folderB>` prints: same or not, then regressions (with both
 * reasons), improvements, the other changed tasks by cost change (largest first), tasks of
 * one batch alone, and the totals A → B. Every value from the folders is escaped. Pure.
 */
export function formatBatchDiff(diff: BatchDiff, divergences: Divergences = new Map()): string {
  const out: string[] = [];
  const { a, b } = diff;
  const differing = diff.regressions.length + diff.improvements.length + diff.changed.length;
  out.push(
    diff.same
      ? `Same: ${a.where} and ${b.where} ran the same ${plural(a.totals.runs, 'task')} alike (outcomes, money, calls, tokens, steps; time aside)`
      : `Differ: ${a.where} → ${b.where}: ${plural(diff.regressions.length, 'regression')}, ${plural(diff.improvements.length, 'improvement')}, ${differing - diff.regressions.length - diff.improvements.length} other changed, ${diff.onlyA.length} only in A, ${diff.onlyB.length} only in B, ${diff.unchanged} alike`,
  );
  const width = Math.min(
    32,
    Math.max(2, ...[...diff.regressions, ...diff.improvements, ...diff.changed].map((p) => p.id.length)),
  );
  const where = (p: TaskPair): string => {
    const kind = divergences.get(p.id);
    return kind === undefined ? '' : `  first differs: ${kind}`;
  };
  const section = (title: string, pairs: readonly TaskPair[], line: (p: TaskPair) => string[]): void => {
    if (pairs.length === 0) return;
    out.push('', `${title} (${pairs.length})`);
    for (const pair of pairs.slice(0, ROWS)) out.push(...line(pair));
    if (pairs.length > ROWS) out.push(`  … and ${pairs.length - ROWS} more (--json lists them all)`);
  };
  const outcomeLines = (p: TaskPair): string[] => [
    `  ${p.id.padEnd(width)}  ${p.a.outcome} → ${p.b.outcome}  ${money(p)}${where(p)}`,
    `    A: ${reasonOf(p.a)}`,
    `    B: ${reasonOf(p.b)}`,
  ];
  section('Regressions: ended well in A, not in B', diff.regressions, outcomeLines);
  section('Improvements: failed in A, ended well in B', diff.improvements, outcomeLines);
  section('Changed, largest cost change first', diff.changed, (p) => [
    `  ${p.id.padEnd(width)}  ${p.a.outcome === p.b.outcome ? p.a.outcome : `${p.a.outcome} → ${p.b.outcome}`}  ${money(p)}  LLM calls ${formatChange(p.llmCallsDelta, 'count')}  tokens ${formatChange(p.tokensDelta, 'count')}${p.stepsDiffer ? '' : '  (same steps)'}${where(p)}`,
  ]);
  const alone = (title: string, runs: BatchDiff['onlyA']): void => {
    if (runs.length === 0) return;
    out.push('', `${title} (${runs.length})`);
    for (const run of runs.slice(0, ROWS))
      out.push(
        `  ${run.id}  ${run.outcome}  ${formatSpendCell(run)}${run.reason === undefined ? '' : `  ${cut(oneLine(run.reason), 200)}`}`,
      );
    if (runs.length > ROWS) out.push(`  … and ${runs.length - ROWS} more (--json lists them all)`);
  };
  alone(`Only in A, ${a.where}`, diff.onlyA);
  alone(`Only in B, ${b.where}`, diff.onlyB);
  out.push('', 'Totals A → B');
  out.push(...totals(a.totals, b.totals));
  if (divergences.size > 0)
    out.push('', `Where a task's runs first differ, and how: agent-sm diff ${a.where} ${b.where} <task>`);
  return `${out.map(escapeControl).join('\n')}\n`;
}

function reasonOf(side: TaskSide): string {
  return side.reason === undefined ? side.outcome : cut(oneLine(side.reason), 300);
}

function money(p: TaskPair): string {
  return `${formatSpendCell(p.a)} → ${formatSpendCell(p.b)} (${formatChange(p.costDeltaUsd, 'usd')})`;
}

function totals(a: BatchDiffTotals, b: BatchDiffTotals): string[] {
  return [
    `  runs           ${formatDelta(a.runs, b.runs, 'count')}`,
    `  ended well     ${formatDelta(a.succeeded, b.succeeded, 'count')}`,
    `  LLM calls      ${formatDelta(a.llmCalls, b.llmCalls, 'count')}`,
    `  tool calls     ${formatDelta(a.toolCalls, b.toolCalls, 'count')}`,
    `  input tokens   ${formatDelta(a.inputTokens, b.inputTokens, 'count')}`,
    `  output tokens  ${formatDelta(a.outputTokens, b.outputTokens, 'count')}`,
    `  money A        ${formatSpend(a)}`,
    `  money B        ${formatSpend(b)}`,
    `  charged        ${formatDelta(a.costUsd, b.costUsd, 'usd')}`,
    `  uncertain      ${formatDelta(a.uncertainUsd, b.uncertainUsd, 'usd')}`,
    `  released       ${formatDelta(a.releasedUsd, b.releasedUsd, 'usd')}`,
    // Calls in none of the dollars: said when either side has any.
    ...(a.unpricedCalls > 0 || b.unpricedCalls > 0
      ? [`  unknown cost   ${formatDelta(a.unpricedCalls, b.unpricedCalls, 'count')} LLM calls`]
      : []),
    `  wall time      ${formatDelta(a.durationMs, b.durationMs, 'ms')} (the runs' added up)`,
  ];
}

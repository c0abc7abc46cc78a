import { formatSpend, formatSpendCell } from '../internal/formatSpend';
import type { BatchFolder } from '../batch/reading/readBatchFolder';
import { escapeControl } from '../internal/escapeControl';
import { formatTime } from '../internal/formatTime';
import { cut, oneLine, plural } from '../internal/text';
import { formatCapPause } from './formatCapPause';

/** Outcomes that are not a failure: ended well, or still running. */
const NOT_FAILED: ReadonlySet<string> = new Set(['end_of_turn', 'wrapped_up', 'running', 'pending']);

/** Whether the run of this outcome failed (did not end well, or never ran): `--exit-code` exits 1 for it. */
export function folderRunFailed(outcome: string): boolean {
  return !NOT_FAILED.has(outcome);
}

/**
 * What `agent-sm inspect <folder>` prints: a head line (runs, failures, spend), why the batch
 * stopped, whether it is paused at its cap (and the `agent-sm raise` that lets it go on), each raise of its paused cap (time, old and new cap) and whether it was resumed, each run failures first (id, outcome, cost, reason,
 * file, earlier attempts), then the runs by outcome and the total cost. Every value from the
 * folder is escaped. Pure.
 */
export function formatBatchFolder(folder: BatchFolder): string {
  const { runs, totals } = folder;
  const failed = runs.filter((r) => folderRunFailed(r.outcome)).length;
  const counts = Object.entries(totals.outcomes).sort(
    ([a], [b]) => runs.findIndex((r) => r.outcome === a) - runs.findIndex((r) => r.outcome === b),
  );
  const out: string[] = [];
  out.push(
    `Batch ${folder.dir}: ${plural(totals.runs, 'run')} (${counts.map(([o, n]) => `${n} ${o}`).join(', ')}), ` +
      `${formatSpend(totals)}${folder.running ? (folder.paused === undefined ? ' (still running)' : ' (still running, paused at its cap)') : ''}` +
      `${folder.manifest === undefined ? ' (no batch.json: the files found)' : ''}`,
  );
  if (folder.paused !== undefined) {
    // The figures `watch` says too: the same function, from the same money (`sumRunMoney`).
    const pause = formatCapPause(folder.paused, folder.raiseArgs, totals);
    out.push(`${pause.paused}; ${pause.raise}`);
  }
  if (folder.stopped !== undefined) out.push(`Stopped early: ${folder.stopped}`);
  // Each raise of its paused cap asked in its raise file: when, and from what to what.
  let cap = folder.manifest?.limits.total?.maxCostUsd;
  for (const raise of folder.raises) {
    const from = cap === undefined ? '' : `$${cap.toFixed(4)} → `;
    out.push(`Cap raised: ${formatTime(raise.at, 'yyyy-MM-dd HH:mm:ss')}  ${from}$${raise.maxCostUsd.toFixed(4)}`);
    cap = Math.max(cap ?? 0, raise.maxCostUsd);
  }
  if (folder.resumed) {
    const again = runs.filter((r) => r.interrupted.length > 0).length;
    out.push(
      `Resumed: ${plural(again, 'run')} went on from an earlier attempt, kept beside its file as <file>.interrupted`,
    );
  }
  out.push('', failed > 0 ? 'Runs, failures first' : 'Runs');
  const idWidth = Math.min(32, Math.max(2, ...runs.map((r) => r.id.length)));
  const outcomeWidth = Math.max(7, ...runs.map((r) => r.outcome.length));
  for (const run of runs) {
    const reason = run.reason === undefined ? '' : `  ${cut(oneLine(run.reason), 200)}`;
    out.push(`  ${run.id.padEnd(idWidth)}  ${run.outcome.padEnd(outcomeWidth)}  ${formatSpendCell(run)}${reason}`);
    if (run.file !== undefined) out.push(`    file: ${run.file}`);
    for (const earlier of run.interrupted) out.push(`    earlier attempt: ${earlier}`);
  }
  out.push('', 'Runs by outcome');
  const width = Math.max(5, ...counts.map(([o]) => o.length));
  for (const [outcome, n] of counts)
    out.push(`  ${outcome.padEnd(width)}  ${String(n).padStart(String(totals.runs).length)}`);
  out.push(`  ${'total'.padEnd(width)}  ${totals.runs}`);
  out.push(`Total cost ${formatSpend(totals)}`);
  return out.map(escapeControl).join('\n');
}

import { emptyUsage } from '../agent/UsageTotals';
import type { RunReport } from './BatchReport';

/** The report row of a task that never ran (`error` says why); `usage` is what an earlier attempt of it spent, if any. */
export function skippedRun(id: string, error: Error, usage = emptyUsage()): RunReport {
  return { id, outcome: 'skipped', usage, durationMs: 0, transitions: 0, error };
}

import type { StoredRun } from 'agent-state-machine/batch';

/** A row of the runs table as `listRuns` selects it. */
export interface StoredRunRow {
  batch_id: string;
  run_id: string;
  started_ms: string;
  outcome: string | null;
  reason: string | null;
  cost_usd: number;
  uncertain_usd: number | null;
  released_usd: number | null;
  uncertain: Array<{ why: string; calls: number }> | null;
  unpriced_calls: number | null;
  unpriced: Array<{ why: string; calls: number }> | null;
  calls: number;
  duration_ms: number;
}

/**
 * Pure: the run a row says. A run still in flight is `incomplete`; a row from before the columns
 * of uncertain and released money or of calls of unknown cost (NULL there) had its figures made
 * again from its lines before it was read, so a NULL left is a run that ended with none.
 */
export function storedRunOf(r: StoredRunRow): StoredRun {
  return {
    batchId: r.batch_id,
    runId: r.run_id,
    startedAt: Number(r.started_ms),
    outcome: r.outcome ?? 'incomplete',
    reason: r.reason ?? undefined,
    costUsd: r.cost_usd,
    uncertainUsd: r.uncertain_usd ?? 0,
    releasedUsd: r.released_usd ?? 0,
    uncertain: r.uncertain ?? [],
    unpricedCalls: r.unpriced_calls ?? 0,
    unpriced: r.unpriced ?? [],
    calls: r.calls,
    durationMs: r.duration_ms,
  };
}

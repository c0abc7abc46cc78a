import type { BatchManifest, StoredBatch, StoredLines } from 'agent-state-machine/batch';

/** The statements `PostgresStore.readBatch` runs, on its tables; `$1` the batch id, `$2` the schema. */
export function storedBatchQueries(t: { batches: string; runs: string }): { batch: string; runs: string } {
  return {
    // Running while a writer holds its advisory lock (keys as openBatch takes them: classid, objid, objsubid 2).
    batch: `SELECT manifest, EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND classid = hashtext($2)::oid AND objid = hashtext($1)::oid) AS running
      FROM ${t.batches} WHERE batch_id = $1`,
    // A run's attempts since the last overwrite: its live one and those a resume set aside.
    runs: `SELECT run_id, run_key, set_aside_at IS NULL AS live FROM ${t.runs} r
      WHERE batch_id = $1 AND (set_aside_at IS NULL OR set_aside_by = 'resume')
        AND run_key > coalesce((SELECT max(run_key) FROM ${t.runs} o
          WHERE o.batch_id = $1 AND o.run_id = r.run_id AND o.set_aside_by = 'overwrite'), 0)
      ORDER BY run_key`,
  };
}

/** A row of `storedBatchQueries().runs`. */
export interface AttemptRow {
  run_id: string;
  run_key: string;
  live: boolean;
}

/**
 * The batch the rows say, each run with the attempts a resume set aside, named as the store
 * names them (`<store> run <id> of batch <batch>`); `lines` reads the lines of a run's row.
 */
export function storedBatchOf(
  batch: { manifest: BatchManifest; running: boolean },
  rows: readonly AttemptRow[],
  base: (runId: string) => string,
  lines: (key: string, name: string, afterLine: number) => AsyncIterable<Uint8Array>,
): StoredBatch {
  const stored = (key: string, name: string): StoredLines => ({
    name,
    read: (afterLine = 0) => lines(key, name, afterLine),
  });
  const byRun = new Map<string, AttemptRow[]>();
  for (const row of rows) byRun.set(row.run_id, [...(byRun.get(row.run_id) ?? []), row]);
  const runs = [...byRun].map(([runId, attempts]) => {
    // As readRun: the live attempt, else (its process died before a resume made one) the newest set aside.
    const run = attempts.find((a) => a.live) ?? attempts.at(-1)!;
    const aside = attempts.filter((a) => a !== run);
    return {
      runId,
      run: stored(run.run_key, base(runId)),
      setAside: aside.map((a, i) => stored(a.run_key, `${base(runId)} (attempt set aside ${aside.length - i})`)),
    };
  });
  return { manifest: batch.manifest, running: batch.running, runs };
}

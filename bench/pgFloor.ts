// The floor of the store suite: the least a writer of the same rows can do with bare `pg`,
// and the commit pattern it replays. Nothing here is part of the library.
//
// The pattern is taken from the library's own `RunLinesSink` (the sink `PostgresStore` gives a
// run) over a writer that only records what it is asked: each commit's lines and whether it
// must be on the disk. The floor then writes exactly those rows, one statement per commit in
// the same order, each with the synchronous_commit the store gives it, on one connection, with
// the run's row inserted first and its end facts updated last, as the store does.
import type { Client } from 'pg';
import { RunLinesSink, type RunLineWriter } from '../lib/history/RunLinesSink';
import type { JsonlHistorySinkOptions } from '../lib/history/JsonlHistorySinkOptions';
import type { HistorySink } from '../lib/machine/HistorySink';

/** One commit: its lines (a history file's lines, without newlines) and whether it waits for the disk. */
export interface Commit {
  readonly lines: readonly string[];
  readonly durable: boolean;
}

/**
 * A sink that records the commits a store's run would make (the store's `RunLinesSink`, with a
 * writer that keeps what it is handed); `commits` holds them once `close()` has resolved.
 */
export async function recordingSink(
  options: JsonlHistorySinkOptions,
): Promise<{ sink: HistorySink<string> & { close(): Promise<void> }; commits: Commit[] }> {
  const commits: Commit[] = [];
  const writer: RunLineWriter = {
    append: async (lines, durable) => {
      commits.push({ lines: [...lines], durable });
    },
    end: async () => undefined,
  };
  const sink = await RunLinesSink.open('recording', writer, options);
  return { sink, commits };
}

/** The tables of a `PostgresStore` in `schema`, quoted. */
export function storeTables(schema: string): { batches: string; runs: string; lines: string } {
  const s = `"${schema.replace(/"/g, '""')}"`;
  return { batches: `${s}.agent_sm_batches`, runs: `${s}.agent_sm_runs`, lines: `${s}.agent_sm_run_lines` };
}

/**
 * Writes one run's rows with bare `pg` on `client`, commit by commit as `commits` says: the
 * run's row (not waiting for the disk), each commit as one INSERT whose synchronous_commit is
 * its durability, then the end facts (not waiting). Returns the nanoseconds it took.
 */
export async function writeFloorRun(
  client: Client,
  schema: string,
  batchId: string,
  runId: string,
  commits: readonly Commit[],
): Promise<number> {
  const t = storeTables(schema);
  const start = process.hrtime.bigint();
  const { rows } = await client.query<{ run_key: string }>(
    `WITH level AS (SELECT set_config('synchronous_commit', 'off', true))
     INSERT INTO ${t.runs} (batch_id, run_id, started_at) SELECT $1, $2, now() FROM level RETURNING run_key`,
    [batchId, runId],
  );
  const key = rows[0]!.run_key;
  let next = 1;
  for (const c of commits) {
    if (c.lines.length === 1)
      await client.query(
        `WITH level AS (SELECT set_config('synchronous_commit', $1, true))
         INSERT INTO ${t.lines} (run_key, line_no, line) SELECT $2, $3, $4 FROM level`,
        [c.durable ? 'on' : 'off', key, next, c.lines[0]],
      );
    else
      await client.query(
        `WITH level AS (SELECT set_config('synchronous_commit', $1, true))
         INSERT INTO ${t.lines} (run_key, line_no, line)
         SELECT $2, $3 + u.o - 1, u.l FROM level, unnest($4::text[]) WITH ORDINALITY AS u(l, o)`,
        [c.durable ? 'on' : 'off', key, next, c.lines],
      );
    next += c.lines.length;
  }
  await client.query(
    `UPDATE ${t.runs} SET ended_at = now(), outcome = 'end_of_turn', cost_usd = 0, calls = 0, duration_ms = 0
     FROM (SELECT set_config('synchronous_commit', 'off', true)) AS level WHERE run_key = $1`,
    [key],
  );
  return Number(process.hrtime.bigint() - start);
}

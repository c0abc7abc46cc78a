// The store suite's resume line: continuing a run cut off after 50 journaled calls, kept in
// PostgresStore, against its floor: a SELECT of the same rows (each line parsed), plus the same
// run served from memory by its scripted agent, its moves written to the store with the same
// durability. The folder version of this line is the `durable` suite's.
//
//  - The cut-off run: one task of 50 tool rounds and an answer, run once with `runBatch` on the
//    store (journal and ledger on, durability 'none'), its lines then cut before the reserve line
//    of its 51st call: what a kill leaves. Each sample gets a batch of its own holding a copy of
//    those rows (its manifest, the run's row, its lines), written with bare `pg`, not timed.
//  - Candidate: `runBatch(task, { store, batchId, resume: true })`: the run continues, its 50
//    calls served from its journal, its last call live.
//  - Floor: the SELECT of the copy's lines and `JSON.parse` of each, then the same task run on
//    the store with `journal: false, ledger: false`, durability 'none', in a batch of its own.
//  - Candidate and floor alternate sample by sample (the order swapping each pair); the figure is
//    the median of per-pair ratios with their quartiles. Target: ≤ 2×.
import type { Client } from 'pg';
import { createScriptedAgent } from '../lib/agent/createScriptedAgent';
import type { BatchTask } from '../lib/batch/BatchOptions';
import { runBatch } from '../lib/batch/runBatch';
import type { PostgresStore } from '../lib/integrations/postgres/PostgresStore';
import {
  formatRatioFigure,
  median,
  ratioFigure,
  ratioTarget,
  scaled,
  type ResultRow,
  type TargetCheck,
} from './harness';
import { CONTINUE_CALLS, longTask as longTaskOf } from './longTask';

const SAMPLES = scaled(15, 5);
const TARGET = 2;

/** The target's name and goal, also for the line that says why it was not measured. */
export const CONTINUE_NAME = `PostgresStore: continue a run cut off after ${CONTINUE_CALLS} calls`;
export const CONTINUE_FLOOR = 'a SELECT of its rows + serving each response from memory';
export const CONTINUE_GOAL = `≤ ${TARGET.toFixed(2)}× ${CONTINUE_FLOOR}`;

/** The long task, its agents made by the sources (the suite times them in process). */
const longTask = (): BatchTask[] => longTaskOf({ createScriptedAgent });

interface Tables {
  readonly batches: string;
  readonly runs: string;
  readonly lines: string;
}

/** What a kill leaves of the long run: the batch's manifest and the run's lines before its 51st reserve line. */
interface CutRun {
  readonly manifest: unknown;
  readonly lines: string[];
}

/** Runs the long task on the store once and cuts its lines as a kill before its last call would. */
async function cutRun(store: PostgresStore, client: Client, t: Tables): Promise<CutRun> {
  await runBatch(longTask(), { store, batchId: 'continue-source', logger: false, historyDurability: 'none' });
  const { rows } = await client.query<{ manifest: unknown; line: string }>(
    `SELECT b.manifest, l.line FROM ${t.batches} b JOIN ${t.runs} r USING (batch_id) JOIN ${t.lines} l USING (run_key)
     WHERE b.batch_id = 'continue-source' AND r.set_aside_at IS NULL ORDER BY l.line_no`,
  );
  let reserves = 0;
  const cut = rows.findIndex((r) => r.line.startsWith('{"type":"reserve"') && ++reserves > CONTINUE_CALLS);
  if (cut === -1) throw new Error('the long run wrote fewer reserve lines than it made calls');
  return { manifest: rows[0]!.manifest, lines: rows.slice(0, cut).map((r) => r.line) };
}

/** A batch `batchId` holding a copy of the cut-off run, as a killed batch leaves it; returns the run's key. */
async function copyCutRun(client: Client, t: Tables, cut: CutRun, batchId: string): Promise<string> {
  await client.query(`INSERT INTO ${t.batches} (batch_id, manifest, owner) VALUES ($1, $2, 'killed')`, [
    batchId,
    JSON.stringify(cut.manifest),
  ]);
  const { rows } = await client.query<{ run_key: string }>(
    `INSERT INTO ${t.runs} (batch_id, run_id, started_at) VALUES ($1, 'long', now()) RETURNING run_key`,
    [batchId],
  );
  const key = rows[0]!.run_key;
  await client.query(
    `INSERT INTO ${t.lines} (run_key, line_no, line) SELECT $1, u.o, u.l FROM unnest($2::text[]) WITH ORDINALITY AS u(l, o)`,
    [key, cut.lines],
  );
  return key;
}

/** ns to continue the copy in batch `batchId` from its journal. */
async function continued(store: PostgresStore, batchId: string): Promise<number> {
  const start = process.hrtime.bigint();
  const report = await runBatch(longTask(), { store, batchId, logger: false, historyDurability: 'none', resume: true });
  const ns = Number(process.hrtime.bigint() - start);
  const served = report.runs[0]!.resume?.recordedCalls;
  if (report.runs[0]!.resumed !== 'recovered' || served !== CONTINUE_CALLS)
    throw new Error(`the cut-off run did not continue from its ${CONTINUE_CALLS} journaled calls (served ${served})`);
  return ns;
}

/** ns of the floor: the SELECT of the copy's lines, each parsed, then the run served from memory into batch `batchId`. */
async function floor(store: PostgresStore, client: Client, t: Tables, key: string, batchId: string): Promise<number> {
  const start = process.hrtime.bigint();
  const { rows } = await client.query<{ line: string }>(
    `SELECT line FROM ${t.lines} WHERE run_key = $1 ORDER BY line_no`,
    [key],
  );
  for (const r of rows) JSON.parse(r.line);
  await runBatch(longTask(), {
    store,
    batchId,
    logger: false,
    historyDurability: 'none',
    journal: false,
    ledger: false,
  });
  return Number(process.hrtime.bigint() - start);
}

/** The resume line's rows and target, measured on `store` (whose tables `t` names) with `client` for the floor. */
export async function continueOnStore(
  store: PostgresStore,
  client: Client,
  t: Tables,
): Promise<{ rows: ResultRow[]; target: TargetCheck }> {
  const cut = await cutRun(store, client, t);
  const ns: number[] = [];
  const floors: number[] = [];
  for (let n = -1; n < SAMPLES; n++) {
    const key = await copyCutRun(client, t, cut, `continue-${n}`);
    const timeFloor = (): Promise<number> => floor(store, client, t, key, `plain-${n}`);
    const timeContinue = (): Promise<number> => continued(store, `continue-${n}`);
    let a: number;
    let b: number;
    if (n % 2 === 0) {
      a = await timeContinue();
      b = await timeFloor();
    } else {
      b = await timeFloor();
      a = await timeContinue();
    }
    if (n >= 0) {
      ns.push(a);
      floors.push(b);
    }
  }
  const ms = (x: number): string => `${(x / 1e6).toFixed(1)} ms`;
  const spread = (xs: number[]): string => `${ms(Math.min(...xs))} – ${ms(Math.max(...xs))}`;
  const ratio = ratioFigure(ns.map((x, i) => x / floors[i]!));
  return {
    rows: [
      {
        label: `SELECT a cut-off run's ${cut.lines.length} rows (journal of ${CONTINUE_CALLS} calls) + the run served from memory: floor`,
        cells: [ms(median(floors)), spread(floors)],
      },
      {
        label: `continue the cut-off run from its journal on PostgresStore (resume: true)`,
        cells: [ms(median(ns)), `${spread(ns)}; ${formatRatioFigure(ratio)}`],
      },
    ],
    target: ratioTarget(CONTINUE_NAME, ratio, TARGET, CONTINUE_FLOOR),
  };
}

// PostgresStore: what a run's records cost in PostgreSQL, per move and per LLM call, in each
// durability mode, against bare `pg` writing the same rows with the same commits; and a batch's
// runs/s on the store beside the same batch on files.
//
//  - Per move: one run of tool-use turns (a tool call, then a 1 KB answer; 12 moves a turn),
//    journal and ledger off, through `PostgresStore`'s run sink, from opening the run to its
//    `close()` (every commit made and the end facts recorded).
//  - Per LLM call: turns of one LLM call with the money ledger on (a `reserve` line committed
//    durably before each call, awaited by the adapter, whatever the mode).
//  - The floor of each (bench/pgFloor.ts): the commits the store makes for the same run, taken
//    from the library's RunLinesSink over a recording writer, replayed with bare `pg` on one
//    connection: the run's row, each commit as one INSERT with the same synchronous_commit, in
//    order, then the end facts; into the same tables.
//  - Candidate and floor alternate sample by sample (the order swapping each pair); the figure
//    is the median of per-pair ratios with their quartiles. Target: ≤ 1.3×.
//  - Batch: `runBatch` of zero-latency tool-round tasks (durable by default: journal and ledger
//    on) with `store` and with `historyDir`, alternating: runs/s of each, printed.
//  - Resume (bench/storeContinue.ts): continuing a run cut off after 50 journaled calls, against
//    a SELECT of its rows plus the same run served from memory. Target: ≤ 2×.
//
// Needs PostgreSQL at BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres); the
// suite works in a schema of its own, dropped at the end. Without a server its targets MISS,
// saying why. The library is loaded from lib/ through tsx (the store is a subpath; its time is
// the database's).
//
//   npm run bench -- store          through the runner
//   npx tsx bench/store.bench.ts    alone
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { AgentWithStateMachine } from '../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../lib/agent/createScriptedAgent';
import type { HistoryDurability } from '../lib/history/JsonlHistorySinkOptions';
import { runBatch } from '../lib/batch/runBatch';
import type { BatchTask } from '../lib/batch/BatchOptions';
import type { HistorySink } from '../lib/machine/HistorySink';
import { DEFAULT_TABLE } from '../lib/machine/transitions';
import { PostgresStore } from '../lib/integrations/postgres/PostgresStore';
import {
  failed,
  formatNs,
  formatRatioFigure,
  median,
  printSuite,
  ratioFigure,
  ratioTarget,
  scaled,
  type RatioFigure,
  type ResultRow,
  type SuiteResult,
  type TargetCheck,
} from './harness';
import { recordingSink, storeTables, writeFloorRun, type Commit } from './pgFloor';
import { instant, TEXT, USAGE } from './longTask';
import { CONTINUE_GOAL, CONTINUE_NAME, continueOnStore } from './storeContinue';

const URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TARGET = 1.3;
// 15 pairs, as the other suites near the disk take: with 7, a median of commits that each wait
// for the disk moved ±0.1× between full runs (1.20× and 1.31× for 'move' per LLM call).
const SAMPLES = scaled(15, 3);
const MODES: readonly HistoryDurability[] = ['none', 'turn', 'move'];
/** Turns per sample: fewer where every line waits for the disk. */
const TURNS: Record<HistoryDurability, number> = { none: scaled(40, 15), turn: scaled(40, 15), move: scaled(15, 6) };
const BATCH_RUNS = scaled(100, 40);

type Kind = 'move' | 'llm';

interface Workload {
  readonly kind: Kind;
  readonly label: string;
  readonly ledger: boolean;
  /** Moves or LLM calls (the unit of the figure) in one turn. */
  readonly perTurn: number;
  readonly replies: () => ScriptedReply[];
}

const WORKLOADS: readonly Workload[] = [
  {
    kind: 'move',
    label: 'per move (tool-use turns, journal and ledger off)',
    ledger: false,
    perTurn: 12,
    replies: () => [
      { toolCalls: [{ id: 'c1', name: 'read' }], usage: USAGE },
      { text: TEXT, usage: USAGE },
    ],
  },
  {
    kind: 'llm',
    label: 'per LLM call (turns of one call, ledger on)',
    ledger: true,
    perTurn: 1,
    replies: () => [{ text: TEXT, usage: USAGE }],
  },
];

function adapterFor(w: Workload, turns: number, sink: HistorySink<string>): AgentWithStateMachine {
  const replies = Array.from({ length: turns }, () => w.replies()).flat();
  return new AgentWithStateMachine(
    createScriptedAgent({ replies, tools: { read: { output: TEXT } }, sleep: instant }),
    { sink, ledger: w.ledger, logger: false, maxHistorySize: 100, sleep: instant },
  );
}

async function runTurns(agent: AgentWithStateMachine, turns: number): Promise<void> {
  for (let t = 0; t < turns; t++) {
    const r = await agent.runTurn('go');
    if (r.outcome !== 'end_of_turn') throw new Error(`a bench turn ended ${r.outcome}: ${r.error?.message}`);
  }
}

/** The commits a store's run of `turns` turns of `w` makes in `mode`. */
async function commitsOf(w: Workload, mode: HistoryDurability, turns: number): Promise<Commit[]> {
  const { sink, commits } = await recordingSink({ runId: 'pattern', durability: mode, table: DEFAULT_TABLE });
  await runTurns(adapterFor(w, turns, sink), turns);
  await sink.close();
  return commits;
}

interface Pair {
  readonly kind: Kind;
  readonly label: string;
  readonly units: number;
  readonly commits: number;
  readonly storeNs: number[];
  readonly floorNs: number[];
  readonly ratio: RatioFigure;
}

async function measure(store: PostgresStore, client: Client, schema: string): Promise<Pair[]> {
  const batch = await store.openBatch({
    batchId: 'bench',
    owner: `bench ${process.pid}`,
    overwrite: false,
    manifest: { startedAt: Date.now(), concurrency: 1, limits: {}, tasks: [] },
  });
  const pairs: Pair[] = [];
  let n = 0;
  try {
    for (const w of WORKLOADS)
      for (const mode of MODES) {
        const turns = TURNS[mode];
        const commits = await commitsOf(w, mode, turns);
        const storeRun = async (): Promise<number> => {
          const start = process.hrtime.bigint();
          const sink = await batch.openRun(`run-${n++}`, { runId: 'run', durability: mode }, DEFAULT_TABLE);
          await runTurns(adapterFor(w, turns, sink), turns);
          await sink.close();
          return Number(process.hrtime.bigint() - start);
        };
        const floorRun = (): Promise<number> => writeFloorRun(client, schema, 'floor', `floor-${n++}`, commits);
        await storeRun();
        await floorRun();
        const storeNs: number[] = [];
        const floorNs: number[] = [];
        for (let s = 0; s < SAMPLES; s++) {
          if (s % 2 === 0) {
            storeNs.push(await storeRun());
            floorNs.push(await floorRun());
          } else {
            floorNs.push(await floorRun());
            storeNs.push(await storeRun());
          }
        }
        const units = turns * w.perTurn;
        pairs.push({
          kind: w.kind,
          label: `'${mode}': ${w.label}`,
          units,
          commits: commits.length,
          storeNs: storeNs.map((x) => x / units),
          floorNs: floorNs.map((x) => x / units),
          ratio: ratioFigure(storeNs.map((x, i) => x / floorNs[i]!)),
        });
      }
  } finally {
    await batch.close();
  }
  return pairs;
}

/** `n` tasks of one tool round each, on zero-latency scripted agents. */
function toolRoundTasks(n: number): BatchTask[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `task-${i}`,
    input: `task ${i}`,
    agent: () =>
      createScriptedAgent({
        replies: [
          { toolCalls: [{ id: 'c1', name: 'read' }], usage: USAGE },
          { text: TEXT, usage: USAGE },
        ],
        tools: { read: { output: TEXT } },
        sleep: instant,
      }),
  }));
}

/** Runs/s of the same batch on the store and on files, alternating. */
async function batches(store: PostgresStore): Promise<{ storeRps: number[]; filesRps: number[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-store-'));
  const storeRps: number[] = [];
  const filesRps: number[] = [];
  const time = async (options: Parameters<typeof runBatch>[1]): Promise<number> => {
    const start = process.hrtime.bigint();
    const report = await runBatch(toolRoundTasks(BATCH_RUNS), { concurrency: 16, logger: false, ...options });
    const ns = Number(process.hrtime.bigint() - start);
    if (report.totals.outcomes.end_of_turn !== BATCH_RUNS) throw new Error('a bench batch run did not end its turn');
    return (BATCH_RUNS * 1e9) / ns;
  };
  try {
    for (let s = -1; s < SAMPLES; s++) {
      const onStore = await time({ store, batchId: `batch-${s}` });
      const onFiles = await time({ historyDir: path.join(dir, `batch-${s}`) });
      if (s >= 0) {
        storeRps.push(onStore);
        filesRps.push(onFiles);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { storeRps, filesRps };
}

function unreachable(why: string): SuiteResult {
  const targets: TargetCheck[] = MODES.flatMap((mode) =>
    WORKLOADS.map((w) => ({
      name: `PostgresStore '${mode}', ${w.label.split(' (')[0]}`,
      goal: `≤ ${TARGET.toFixed(2)}× bare pg inserts, same commits`,
      measured: `not measured: ${why}`,
      pass: false,
    })),
  );
  targets.push({ name: CONTINUE_NAME, goal: CONTINUE_GOAL, measured: `not measured: ${why}`, pass: false });
  return { suite: 'store', columns: ['median'], rows: [], targets };
}

export async function run(): Promise<SuiteResult> {
  const schema = `agent_sm_bench_${process.pid}`;
  const client = new Client({ connectionString: URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    return unreachable(`PostgreSQL at ${URL} is not reachable (${error instanceof Error ? error.message : error})`);
  }
  const store = new PostgresStore(URL, { schema });
  try {
    await store.migrate();
    const pairs = await measure(store, client, schema);
    const b = await batches(store);
    const resume = await continueOnStore(store, client, storeTables(schema));
    const rows: ResultRow[] = pairs.flatMap((p) => [
      {
        label: `${p.label}: floor, bare pg (${p.commits} commits for ${p.units} ${p.kind === 'move' ? 'moves' : 'calls'})`,
        cells: [formatNs(median(p.floorNs)), ''],
      },
      { label: `${p.label}: PostgresStore`, cells: [formatNs(median(p.storeNs)), formatRatioFigure(p.ratio)] },
    ]);
    const rps = (x: number): string => `${x.toFixed(0)} runs/s`;
    rows.push(
      {
        label: `batch of ${BATCH_RUNS} tool-round runs, concurrency 16, durable by default: history files`,
        cells: [rps(median(b.filesRps)), `${rps(Math.min(...b.filesRps))} – ${rps(Math.max(...b.filesRps))}`],
      },
      {
        label: `the same batch on PostgresStore`,
        cells: [
          rps(median(b.storeRps)),
          `${rps(Math.min(...b.storeRps))} – ${rps(Math.max(...b.storeRps))}; ÷ files ${formatRatioFigure(ratioFigure(b.storeRps.map((x, i) => x / b.filesRps[i]!)))}`,
        ],
      },
    );
    rows.push(...resume.rows);
    return {
      suite: 'store',
      columns: ['median', '× floor / spread'],
      rows,
      targets: [
        ...pairs.map((p) =>
          ratioTarget(
            `PostgresStore ${p.label.split(' (')[0]}`,
            p.ratio,
            TARGET,
            'bare pg inserts, same rows and commits',
          ),
        ),
        resume.target,
      ],
    };
  } finally {
    await store.close().catch(() => undefined);
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

if (require.main === module) run().then(printSuite, failed);

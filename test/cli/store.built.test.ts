// `agent-sm store migrate`, `agent-sm runs --store` and `agent-sm inspect --store`, as users run
// them: the built executable in a child process, against the real local PostgreSQL.
import { createScriptedAgent, runBatch, type BatchTask } from '../../lib/index';
import { PostgresStore } from '../../lib/integrations/postgres';
import { buildCli, buildLibrary, runBuiltCli } from '../helpers/builtCli';
import { manualClock } from '../helpers/manualClock';
import { PG_URL, testSchema, type TestSchema } from '../helpers/postgres';
import { freePort } from '../helpers/redis';
import { threeFiguresTask, THREE_FIGURES } from '../helpers/threeFigures';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const task = (id: string, reply: { text?: string; raw?: unknown }): BatchTask => ({
  id,
  input: 'go',
  agent: () =>
    createScriptedAgent({
      sleep: () => tick(),
      replies: [{ ...reply, usage: { costUsd: 0.25, inputTokens: 1, outputTokens: 1 } }],
    }),
});

beforeAll(() => {
  buildCli();
  buildLibrary({ index: 'lib/index.ts', 'postgres/index': 'lib/integrations/postgres/index.ts' });
}, 120_000);

let db: TestSchema;
let url: string;
beforeEach(async () => {
  db = await testSchema();
  // The store's schema is the connection's search path: the CLI takes a URL alone.
  url = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${db.schema}`)}`;
});
afterEach(() => db.drop());

describe('agent-sm on a store', () => {
  it('store migrate creates the tables, and again does nothing', async () => {
    for (let i = 0; i < 2; i++) {
      const { code, stdout, stderr } = runBuiltCli(['store', 'migrate', url]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toBe('postgres://127.0.0.1:5432/postgres: ready\n');
    }
    const { rows } = await db.client.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [db.schema],
    );
    expect(rows.map((r) => r.table_name)).toEqual([
      'agent_sm_answers',
      'agent_sm_batches',
      'agent_sm_pauses',
      'agent_sm_raises',
      'agent_sm_run_lines',
      'agent_sm_runs',
    ]);
  });

  it('runs lists runs across batches, filtered; inspect and show --store read one run with no file anywhere, inspect --store a batch', async () => {
    const store = new PostgresStore(url, { schema: db.schema });
    try {
      const options = { logger: false as const, sleep: () => tick(), clock: manualClock(Date.now()).now, store };
      await runBatch([task('ok', { text: 'done' }), task('bad', { raw: 'not a response' })], {
        ...options,
        batchId: 'night',
      });
      await runBatch([task('later', { text: 'done' })], { ...options, batchId: 'morning' });
    } finally {
      await store.close();
    }
    const all = runBuiltCli(['runs', '--store', url, '--json']);
    expect(all.code).toBe(0);
    const rows = JSON.parse(all.stdout) as Array<{ batchId: string; runId: string; outcome: string; calls: number }>;
    expect(rows.map((r) => `${r.batchId}/${r.runId}:${r.outcome}:${r.calls}`).sort()).toEqual([
      'morning/later:end_of_turn:1',
      'night/bad:error:1',
      'night/ok:end_of_turn:1',
    ]);
    const errors = runBuiltCli(['runs', '--store', url, '--outcome', 'error', '--since', '1d']);
    expect(errors.code).toBe(0);
    expect(errors.stdout).toMatch(
      /^BATCH +RUN +OUTCOME +BILLED +UNCERTAIN +RELEASED +CALLS +DURATION +STARTED +REASON\nnight +bad +error +\$0\.0000 \(\+1 call of unknown cost\) +\$0\.0000 +\$0\.0000 +1 /,
    );
    // Its one call answered what is no response: it may have been billed, and its cost is unknown, never $0.
    expect(errors.stdout).toMatch(
      /\n1 run, \$0\.\d{4} billed, and 1 LLM call of unknown cost \(no `pricing` was given, so the cost of \(model not reported\) is unknown\), 1 call\n$/,
    );
    expect(runBuiltCli(['runs', '--store', url, '--batch', 'none']).stdout).toBe(
      'No runs in postgres://127.0.0.1:5432/postgres match.\n',
    );

    const inspected = runBuiltCli(['inspect', '--store', url, 'night', 'bad']);
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toContain('postgres://127.0.0.1:5432/postgres run bad of batch night');
    expect(inspected.stdout).toMatch(/Error/);
    const json = runBuiltCli(['inspect', '--store', url, '--json', 'night', 'ok']);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'ok' });
    const shown = runBuiltCli(['show', '--store', url, 'night', 'ok']);
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: '' });
    expect(shown.stdout).toContain('go');
    expect(shown.stdout).toContain('done');
    // The batch, as inspect <folder> says a folder's: its runs, failures first, its totals.
    const batch = runBuiltCli(['inspect', '--store', url, 'night']);
    expect({ code: batch.code, stderr: batch.stderr }).toEqual({ code: 0, stderr: '' });
    expect(batch.stdout).toMatch(
      /^Batch postgres:\/\/127\.0\.0\.1:5432\/postgres batch night: 2 runs \(1 error, 1 end_of_turn\), \$0\.\d{4} billed, and 1 LLM call of unknown cost \([^\n]*\)\n/,
    );
    expect(batch.stdout.indexOf('bad')).toBeLessThan(batch.stdout.indexOf('ok'));
    expect(runBuiltCli(['inspect', '--store', url, '--exit-code', 'night']).code).toBe(1);
    const noBatch = runBuiltCli(['inspect', '--store', url, 'nope']);
    expect(noBatch.code).toBe(2);
    expect(noBatch.stderr).toContain('batch nope: no such batch in the store');
    const noRun = runBuiltCli(['show', '--store', url, 'night']);
    expect(noRun.code).toBe(2);
    expect(noRun.stderr).toBe('agent-sm: error: --store reads one run: show --store <url> <batchId> <runId>\n');
    const missing = runBuiltCli(['inspect', '--store', url, 'night', 'nope']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^agent-sm: error: .*run nope of batch night.*no such run in the store\n$/);
  });

  it('runs says money apart: billed, uncertain with why, released; --json carries the same', async () => {
    const store = new PostgresStore(url, { schema: db.schema });
    try {
      const options = { logger: false as const, sleep: () => tick(), clock: manualClock(Date.now()).now, store };
      await runBatch([threeFiguresTask('m1', tick), threeFiguresTask('m2', tick)], {
        ...options,
        ...THREE_FIGURES,
        batchId: 'money',
      });
    } finally {
      await store.close();
    }
    const listed = runBuiltCli(['runs', '--store', url]);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^BATCH +RUN +OUTCOME +BILLED +UNCERTAIN +RELEASED +CALLS /);
    expect(rows.slice(0, 2).sort()).toEqual([
      expect.stringMatching(/^money +m1 +end_of_turn +\$0\.0006 +\$0\.0100 +\$0\.0100 +3 /),
      expect.stringMatching(/^money +m2 +end_of_turn +\$0\.0006 +\$0\.0100 +\$0\.0100 +3 /),
    ]);
    expect(rows.at(-1)).toBe(
      '2 runs, $0.0012 billed, $0.0200 uncertain (2 LLM calls: it failed after the request may have left (HTTP 500)), ' +
        '$0.0200 released (not billed), 6 calls',
    );
    const json = JSON.parse(runBuiltCli(['runs', '--store', url, '--json']).stdout) as Array<Record<string, unknown>>;
    expect(json[0]).toMatchObject({
      uncertainUsd: 0.01,
      releasedUsd: 0.01,
      uncertain: [{ why: 'it failed after the request may have left (HTTP 500)', calls: 1 }],
    });
  });

  it('runs --outcome refuses an outcome it does not know and takes a comma list; --failed selects the runs that ended in an error state', async () => {
    const store = new PostgresStore(url, { schema: db.schema });
    try {
      const options = { logger: false as const, sleep: () => tick(), clock: manualClock(Date.now()).now, store };
      await runBatch([task('ok', { text: 'done' }), task('bad', { raw: 'not a response' })], {
        ...options,
        batchId: 'night',
      });
    } finally {
      await store.close();
    }
    const ids = (args: string[]) => {
      const listed = runBuiltCli(['runs', '--store', url, '--json', ...args]);
      expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
      return (JSON.parse(listed.stdout) as Array<{ runId: string }>).map((r) => r.runId).sort();
    };
    expect(ids(['--outcome', 'budget_exceeded,error'])).toEqual(['bad']);
    expect(ids(['--outcome', 'error, end_of_turn'])).toEqual(['bad', 'ok']);
    expect(ids(['--failed'])).toEqual(['bad']);
    expect(ids(['--failed', '--outcome', 'end_of_turn'])).toEqual([]);

    const known = 'end_of_turn, wrapped_up, budget_exceeded, stalled, error, cancelled, incomplete';
    for (const outcome of ['failed', 'error,failed']) {
      const refused = runBuiltCli(['runs', '--store', url, '--outcome', outcome]);
      expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 2, stdout: '' });
      expect(refused.stderr).toBe(
        `agent-sm: error: unknown outcome "failed" for --outcome: expected ${known} (or a custom terminal state ` +
          'some run in postgres://127.0.0.1:5432/postgres ended in); --failed selects every run that ended in an error state\n',
      );
    }
    const empty = runBuiltCli(['runs', '--store', url, '--outcome', 'error,']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain(
      'expected an outcome or a comma list of them (e.g. error,budget_exceeded), got "error,"',
    );
  });

  it('fails in bounded time naming host:port when PostgreSQL is not there', async () => {
    const port = await freePort();
    const { code, stdout, stderr } = runBuiltCli(['runs', '--store', `postgres://postgres@127.0.0.1:${port}/postgres`]);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(
      new RegExp(
        `^agent-sm: error: PostgreSQL at 127\\.0\\.0\\.1:${port} unreachable: creating its tables had no answer for \\d+ ms`,
      ),
    );
  });
});

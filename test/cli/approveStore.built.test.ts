// `agent-sm approvals|approve|deny --store URL <batchId>` as the built executable: a batch of ten
// scripted tasks kept in a store (PostgreSQL in its own schema; a folder of batches by a file:
// URL), run in another process, four of which wait
// for approval of `deploy`, answered from the terminal (two approved, two denied) — while it
// runs, and while it is down after a SIGKILL, then resumed. Each answer is kept in the store and
// taken once by the batch; a second one, an unknown batch, run or call, a run that does not
// wait: refused by name (exit 2).
import * as os from 'node:os';
import type { RunStore } from '../../lib/subpaths/batch';
import { cliStore, type CliStore, type StoreKind } from '../helpers/cliStore';
import { buildCli, buildLibrary, runBuiltCli } from '../helpers/builtCli';
import { storedRuns } from '../helpers/postgres';
import { spawnWatched, type WatchedChild } from '../helpers/watchedChild';

const FIXTURE = 'test/fixtures/batch/approvalBatch.ts';
const DEPLOYING = ['t1', 't3', 't5', 't7'];
const ALL_PARKED = new RegExp(DEPLOYING.map((id) => `(?=[\\s\\S]*^parked ${id}\\n)`).join(''), 'm');
const REPORT = /^(\{"outcomes".*\})\n/m;
const IDS = Array.from({ length: 10 }, (_, i) => `t${i}`);
/** Who answers when `--by` is left out. */
const LOGIN = os.userInfo().username;

let store: CliStore | undefined;
let url: string;
let batch: WatchedChild['child'] | undefined;
beforeAll(() => {
  buildCli();
  buildLibrary({ index: 'lib/index.ts', 'postgres/index': 'lib/integrations/postgres/index.ts' });
}, 120_000);
/** A new store of `kind` for each test: a schema of its own, or a folder. */
async function newStore(of: StoreKind): Promise<void> {
  store = await cliStore(of);
  url = store.url;
}
afterEach(async () => {
  batch?.kill('SIGKILL');
  batch = undefined;
  await store?.drop();
  store = undefined;
});

/** The store the test's batch is kept in, opened here to read it. */
function openedStore(): RunStore {
  return store!.open();
}

/** The approval batch in its own process, kept in the store: what it printed so far, and a way to wait for more. */
function startBatch(mode?: 'resume'): WatchedChild {
  const started = spawnWatched(FIXTURE, [os.tmpdir(), ...(mode === undefined ? [] : [mode])], {
    STORE_URL: url,
    BATCH_ID: 'night',
  });
  batch = started.child;
  return started;
}

const cli = (args: string[]) => runBuiltCli([args[0]!, '--store', url, 'night', ...args.slice(1)]);

/** Approves t1 (as alice) and t5 and denies t3 and t7 from the built CLI, each exit 0. */
function answerFour(): void {
  for (const [verb, run, ...rest] of [
    ['approve', 't1', 'c2', '--by', 'alice'],
    ['deny', 't3', 'c2', '--reason', 'not today'],
    ['approve', 't5'],
    ['deny', 't7', '--reason', 'not today'],
  ]) {
    const answered = cli([verb!, run!, ...rest]);
    expect({ code: answered.code, stderr: answered.stderr }).toEqual({ code: 0, stderr: '' });
    expect(answered.stdout).toContain(
      `agent-sm: ${verb === 'approve' ? 'approved' : 'denied'} 1 call of run ${run}: c2 (deploy); `,
    );
  }
}

/** The report's outcomes, the deploys that ran, and what each run's history in the store told the LLM of a denied call. */
async function expectEnded(b: ReturnType<typeof startBatch>): Promise<void> {
  const [, json] = await b.seen(REPORT);
  const report = JSON.parse(json!) as { outcomes: Record<string, string>; runs: number };
  expect(report.runs).toBe(10);
  expect(report.outcomes).toEqual(Object.fromEntries(IDS.map((id) => [id, 'end_of_turn'])));
  const ran = b
    .out()
    .split('\n')
    .filter((l) => l.startsWith('ran deploy'))
    .sort();
  expect(ran).toEqual(['ran deploy t1', 'ran deploy t5']);
  await b.closed;
  const store = openedStore();
  try {
    const runs = await storedRuns(store, 'night', IDS);
    for (const id of ['t3', 't7']) expect(runs.get(id)).toContain('denied: not today');
    for (const id of ['t1', 't5']) expect(runs.get(id)).not.toContain('denied:');
    // Every answer kept was taken, once.
    const answers = await store.readAnswers!('night');
    expect(answers.map((a) => ({ run_id: a.run, taken: a.taken, by: a.by }))).toEqual([
      { run_id: 't1', taken: true, by: 'alice' },
      { run_id: 't3', taken: true, by: LOGIN },
      { run_id: 't5', taken: true, by: LOGIN },
      { run_id: 't7', taken: true, by: LOGIN },
    ]);
  } finally {
    await store.close();
  }
}

/** The URL scheme of the test's store, as messages name it. */
const scheme = (): string => (store!.kind === 'postgres' ? 'postgres' : 'file');

/** Resolves once the store holds the four runs' waits (each AwaitingApproval move committed). */
async function allWaitingInStore(): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 20_000;) {
    const listed = cli(['approvals', '--json']);
    if (listed.code === 0 && (JSON.parse(listed.stdout) as { calls: unknown[] }).calls.length === 4) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the store never held the four waits');
}

describe.each<[string, StoreKind]>([
  ['PostgreSQL', 'postgres'],
  ['a folder of batches (file:)', 'file'],
])('agent-sm approvals | approve | deny --store URL <batchId> (built executable) on %s', (_label, of) => {
  beforeEach(() => newStore(of));

  it('lists the four calls that wait; two approved and two denied from the terminal reach the batch running in another process, each once', async () => {
    const b = startBatch();
    await b.seen(ALL_PARKED);
    const listed = cli(['approvals', '--json']);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    const waiting = JSON.parse(listed.stdout) as {
      batchId: string;
      running: boolean;
      calls: Array<{ run: string; callId: string; tool: string; input: unknown; waitedMs: number }>;
    };
    expect(waiting).toMatchObject({ batchId: 'night', running: true });
    expect(waiting.calls.map(({ run, callId, tool, input }) => ({ run, callId, tool, input }))).toEqual(
      DEPLOYING.map((id) => ({ run: id, callId: 'c2', tool: 'deploy', input: { target: `prod-${id}` } })),
    );
    const text = cli(['approvals']);
    expect(text.stdout).toContain(`4 tool calls wait for approval in batch night (store ${scheme()}://`);
    expect(text.stdout).toMatch(/^ {2}t3 {2}c2 {2}deploy \{"target":"prod-t3"\} {2}waiting /m);

    answerFour();
    // A second answer to a call: refused, whether the batch took the first yet or not.
    const again = cli(['approve', 't1', 'c2']);
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 2, stdout: '' });
    expect(again.stderr).toMatch(/^agent-sm: error: call c2 of run t1 was answered already \(approved by alice at /);
    await expectEnded(b);
    // Once the run went on, still refused, and saying so.
    const late = cli(['deny', 't3']);
    expect(late.code).toBe(2);
    expect(late.stderr).toContain(`call c2 of run t3 was answered already (denied by ${LOGIN} at `);
    expect(late.stderr).toContain('the run has gone on with it; nothing waits for another answer');
  }, 90_000);

  it('a batch killed while parked, answered while down, then resumed, takes the answers and asks none again', async () => {
    const first = startBatch();
    await first.seen(ALL_PARKED);
    // A store commits a run's lines a moment after the run parks: killed once all four waits are in it.
    await allWaitingInStore();
    first.child.kill('SIGKILL');
    await first.closed;
    const listed = cli(['approvals']);
    expect(listed.stdout).toContain('4 tool calls wait for approval in batch night');
    expect(listed.stdout).toContain('(no batch runs there now)');
    answerFour();
    const again = cli(['deny', 't5']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('every call run t5 waits on was answered already (c2): an answer is taken once');
    const shown = cli(['approvals']);
    expect(shown.stdout).toMatch(/^ {2}t1 {2}c2 {2}deploy .* — approved by alice, not taken yet$/m);

    const resumed = startBatch('resume');
    await expectEnded(resumed);
    expect(cli(['approvals']).stdout).toMatch(
      new RegExp(`^agent-sm: no run of batch night \\(store ${scheme()}://.*\\) waits for approval\n$`),
    );
  }, 90_000);

  it('names what is wrong: an unknown batch, run or call, a run that does not wait', async () => {
    const b = startBatch();
    await b.seen(ALL_PARKED);
    b.child.kill('SIGKILL');
    await b.closed;
    const unknownBatch = runBuiltCli(['approvals', '--store', url, 'day']);
    expect({ code: unknownBatch.code, stdout: unknownBatch.stdout }).toEqual({ code: 2, stdout: '' });
    expect(unknownBatch.stderr).toContain('batch day: no such batch in the store');
    const unknownRun = cli(['approve', 'nope']);
    expect(unknownRun.code).toBe(2);
    expect(unknownRun.stderr).toContain(`Expected \`run\` to be the id of a run of batch night (store ${scheme()}://`);
    expect(unknownRun.stderr).toContain('(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9), got `nope` (string)');
    const unknownCall = cli(['deny', 't1', 'c9']);
    expect(unknownCall.code).toBe(2);
    expect(unknownCall.stderr).toBe(
      'agent-sm: error: Expected `callId` to be the id of a call run t1 waits on (c2), got `c9` (string)\n',
    );
    const notWaiting = cli(['approve', 't0']);
    expect(notWaiting.code).toBe(2);
    expect(notWaiting.stderr).toContain(
      'run t0 does not wait for approval (its history does not end in AwaitingApproval: it went on, ended or has not started)',
    );
    const store = openedStore();
    try {
      expect(await store.readAnswers!('night')).toEqual([]);
    } finally {
      await store.close();
    }
  }, 90_000);
});

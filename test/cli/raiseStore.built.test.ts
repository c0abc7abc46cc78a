// `agent-sm raise --store URL <batchId> --total-usd N` as the built executable, on both stores
// (a folder of batches by a file: URL; PostgreSQL in a schema of its own): a store batch paused
// at its cap in another process (test/fixtures/batch/pausingBatch.ts with STORE_URL) is shown
// paused by `inspect --store` and `watch --store`, with the raise that lets it go on, and goes
// on when raised; one
// killed while paused, raised, then resumed, starts from the raised cap and pays for no call
// twice; an ended batch and an unknown one are refused by name (exit 2).
import * as os from 'node:os';
import { buildCli, buildLibrary, runBuiltCli, startCli } from '../helpers/builtCli';
import { cliStore, type CliStore, type StoreKind } from '../helpers/cliStore';
import { spawnWatched, type WatchedChild } from '../helpers/watchedChild';

const FIXTURE = 'test/fixtures/batch/pausingBatch.ts';
const REPORT = /^(\{.*\})\n/m;

let store: CliStore | undefined;
let batch: WatchedChild['child'] | undefined;
beforeAll(() => {
  buildCli();
  buildLibrary({ index: 'lib/index.ts', 'postgres/index': 'lib/integrations/postgres/index.ts' });
}, 120_000);
afterEach(async () => {
  batch?.kill('SIGKILL');
  batch = undefined;
  await store?.drop();
  store = undefined;
});

/** The pausing batch in its own process, kept in the test's store as batch `paused`. */
function startBatch(mode?: 'resume'): WatchedChild {
  const started = spawnWatched(FIXTURE, [os.tmpdir(), ...(mode === undefined ? [] : [mode])], {
    STORE_URL: store!.url,
  });
  batch = started.child;
  return started;
}

const raise = (usd: string, batchId = 'paused') =>
  runBuiltCli(['raise', '--store', store!.url, batchId, '--total-usd', usd]);

type Report = { outcomes: string[]; costUsd: number; raises: unknown[] };

describe.each<[string, StoreKind]>([
  ['a folder of batches (file:)', 'file'],
  ['PostgreSQL', 'postgres'],
])('agent-sm raise --store (built executable): %s', (_name, kind) => {
  beforeEach(async () => {
    store = await cliStore(kind);
  });

  it('a store batch paused at its cap in another process is shown paused, and goes on when raised', async () => {
    const b = startBatch();
    await b.seen(/paused at 0.02\n/);
    // Its pause is noted in the store a moment after onPause is told: inspect says it once there.
    let inspect = runBuiltCli(['inspect', '--store', store!.url, 'paused']);
    for (let i = 0; i < 50 && !inspect.stdout.includes('Paused at its cap'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      inspect = runBuiltCli(['inspect', '--store', store!.url, 'paused']);
    }
    expect(inspect.code).toBe(0);
    const opened = store!.open();
    const name = opened.name;
    await opened.close();
    expect(inspect.stdout).toContain(
      `Paused at its cap: $0.0120 of $0.0200 ($0.0120 billed); raise with agent-sm raise --store ${name} paused --total-usd 0.05`,
    );
    // watch, piped: the same pause line, from the store.
    const watching = startCli(['watch', '--store', store!.url, 'paused']);
    try {
      await watching.seen(`raise with agent-sm raise --store ${name} paused --total-usd 0.05`);
    } finally {
      watching.child.kill('SIGKILL');
    }
    const raised = raise('0.05');
    expect({ code: raised.code, stderr: raised.stderr }).toEqual({ code: 0, stderr: '' });
    expect(raised.stdout).toBe(
      `agent-sm: asked batch paused of ${name} to raise its cap from $0.0200 to $0.0500; the running batch takes it within a second\n`,
    );
    const [, json] = await b.seen(REPORT);
    const report = JSON.parse(json!) as Report;
    expect(report.outcomes).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
    expect(report.costUsd).toBeCloseTo(0.036, 10);
    expect(report.raises).toEqual([[0.02, 0.05, 'store']]);
    await b.closed;

    // Ended: nothing waits for a raise, and nothing is kept.
    const again = raise('0.10');
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 2, stdout: '' });
    expect(again.stderr).toBe(
      `agent-sm: error: batch paused of ${name} has ended: 3 runs ran to an end (3 end_of_turn), $0.0360 spent, and none ` +
        'waits for a raise; to run its tasks under a higher cap, run them as a new batch under another id\n',
    );
    const unknown = raise('0.10', 'nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('batch nope: no such batch in the store');
    const both = runBuiltCli(['raise', '--store', store!.url, '--redis', 'redis://x', 'paused', '--total-usd', '1']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give --redis (a BullMQ batch) or --store (a store batch), not both');
  }, 60_000);

  it('a store batch killed while paused, raised, then resumed, starts from the raised cap and pays for no call twice', async () => {
    const first = startBatch();
    await first.seen(/paused at 0.02\n/);
    first.child.kill('SIGKILL');
    await first.closed;
    const raised = raise('0.05');
    expect({ code: raised.code, stderr: raised.stderr }).toEqual({ code: 0, stderr: '' });
    expect(raised.stdout).toContain(
      'no batch runs it now: resuming it (runBatch with resume: true) starts from this cap',
    );
    const again = startBatch('resume');
    const [, json] = await again.seen(REPORT);
    const report = JSON.parse(json!) as Report;
    expect(report.outcomes).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
    expect(report.costUsd).toBeCloseTo(0.036, 10);
    expect(report.raises).toEqual([[0.02, 0.05, 'store']]);
  }, 60_000);
});

// `agent-sm raise <folder> --total-usd N` as the built executable: a batch paused at its cap in
// another process goes on when raised, and a batch killed while paused, raised, then resumed,
// starts from the raised cap. Errors name what is wrong, exit 2.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeBatchManifest } from '../../lib/batch/keeping/batchManifest';
import { buildCli, runBuiltCli, startCli } from '../helpers/builtCli';
import { spawnWatched, type WatchedChild } from '../helpers/watchedChild';

const FIXTURE = 'test/fixtures/batch/pausingBatch.ts';

let dir: string;
let batch: WatchedChild['child'] | undefined;
beforeAll(() => buildCli(), 120_000);
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-raise-'))));
afterEach(() => {
  batch?.kill('SIGKILL');
  batch = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The pausing batch in its own process, and ways to wait for what it prints. */
function startBatch(mode?: 'resume'): WatchedChild {
  const started = spawnWatched(FIXTURE, [dir, ...(mode === undefined ? [] : [mode])]);
  batch = started.child;
  return started;
}

describe('agent-sm raise <folder> --total-usd N (built executable)', () => {
  it('a batch paused at its cap in another process goes on when raised', async () => {
    const b = startBatch();
    await b.seen(/paused at 0.02\n/);
    const cli = startCli(['raise', dir, '--total-usd', '0.05']);
    expect(await cli.exited()).toBe(0);
    expect(cli.stdout()).toContain(
      `agent-sm: asked the batch in ${dir} to raise its cap from $0.0200 to $0.0500; the running batch takes it within a second`,
    );
    const [, json] = await b.seen(/^(\{.*\})\n/m);
    const report = JSON.parse(json!) as { outcomes: string[]; costUsd: number; raises: unknown[] };
    expect(report.outcomes).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
    expect(report.costUsd).toBeCloseTo(0.036, 10);
    expect(report.raises).toEqual([[0.02, 0.05, 'folder']]);
  }, 60_000);

  it('refuses to raise a batch that has ended, saying so and how it ended', async () => {
    const b = startBatch();
    await b.seen(/paused at 0.02\n/);
    expect(runBuiltCli(['raise', dir, '--total-usd', '0.05']).code).toBe(0);
    await b.seen(/^(\{.*\})\n/m);
    await new Promise((resolve) => (b.child.exitCode !== null ? resolve(null) : b.child.once('close', resolve)));
    const raises = fs.readFileSync(path.join(dir, 'batch.raises'), 'utf8');
    const again = runBuiltCli(['raise', dir, '--total-usd', '0.10']);
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 2, stdout: '' });
    expect(again.stderr).toBe(
      `agent-sm: error: the batch in ${dir} has ended: 3 runs ran to an end (3 end_of_turn), $0.0360 spent, and none ` +
        'waits for a raise; to run its tasks under a higher cap, run them as a new batch in another folder\n',
    );
    expect(fs.readFileSync(path.join(dir, 'batch.raises'), 'utf8')).toBe(raises);
  }, 60_000);

  it('a batch killed while paused, raised, then resumed, starts from the raised cap and pays for no call twice', async () => {
    const first = startBatch();
    await first.seen(/paused at 0.02\n/);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('close', resolve));
    const raised = runBuiltCli(['raise', dir, '--total-usd', '0.05']);
    expect(raised.code).toBe(0);
    expect(raised.stdout).toContain(
      'no batch runs there now: resuming it (runBatch with resume: true) starts from this cap',
    );
    const again = startBatch('resume');
    const [, json] = await again.seen(/^(\{.*\})\n/m);
    const report = JSON.parse(json!) as { outcomes: string[]; costUsd: number; raises: unknown[] };
    expect(report.outcomes).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
    // Two calls of t0 and, across both processes, two of t1 and two of t2: none paid twice.
    expect(report.costUsd).toBeCloseTo(0.036, 10);
    expect(report.raises).toEqual([[0.02, 0.05, 'folder']]);
  }, 60_000);

  it('names what is wrong: a batch that stops at its cap, a cap not above the one in force, --batch without --redis, a bad figure', () => {
    writeBatchManifest(dir, { startedAt: 0, concurrency: 1, limits: { total: { maxCostUsd: 1 } }, tasks: [] });
    const stops = runBuiltCli(['raise', dir, '--total-usd', '2']);
    expect(stops.code).toBe(2);
    expect(stops.stderr).toMatch(
      /^agent-sm: error: Expected `folder` to be the folder of a batch run with total: \{ maxCostUsd, whenSpent: 'pause' \}/,
    );
    writeBatchManifest(dir, {
      startedAt: 0,
      concurrency: 1,
      limits: { total: { maxCostUsd: 1, whenSpent: 'pause' } as { maxCostUsd: number } },
      tasks: [],
    });
    const low = runBuiltCli(['raise', dir, '--total-usd', '1']);
    expect(low.code).toBe(2);
    expect(low.stderr).toContain(
      'Expected `--total-usd` to be a cap above the one in force ($1.0000), got `1` (number)',
    );
    // A BullMQ batch's options without --redis (pauseMultiProcess.test.ts raises one with it).
    const noRedis = runBuiltCli(['raise', dir, '--batch', 'batch-1', '--total-usd', '2']);
    expect(noRedis.code).toBe(2);
    expect(noRedis.stderr).toContain('--batch is for a BullMQ batch: give --redis URL with it');
    const bad = runBuiltCli(['raise', dir, '--total-usd', 'ten']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected a plain decimal number of USD above 0 (e.g. 30 or 12.50), got "ten"');
    // Number() reads these as 16, 10 and 2: a cap typed so is a mistake, never a figure.
    for (const figure of ['0x10', '1e1', ' 2', '+2', 'Infinity']) {
      const odd = runBuiltCli(['raise', dir, '--total-usd', figure]);
      expect({ code: odd.code, stdout: odd.stdout }).toEqual({ code: 2, stdout: '' });
      expect(odd.stderr).toContain(
        `expected a plain decimal number of USD above 0 (e.g. 30 or 12.50), got ${JSON.stringify(figure)}`,
      );
    }
    expect(fs.existsSync(path.join(dir, 'batch.raises'))).toBe(false);
  });
});

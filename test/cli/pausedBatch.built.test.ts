// A batch paused at its dollar cap in another process (test/fixtures/batch/pausingBatch.ts: three
// tasks, $0.02 cap, whenSpent: 'pause'), read by the built executable: `inspect` says it is
// paused, with what it spent of the cap and the `agent-sm raise` that lets it go on; `watch`
// says the same figures at the same moment; the task not started is pending, never skipped.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildCli, runBuiltCli, startCli, type RunningCli } from '../helpers/builtCli';

const ROOT = path.join(__dirname, '..', '..');
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'batch', 'pausingBatch.ts');

let dir: string;
let batch: ChildProcessWithoutNullStreams | undefined;
let watching: RunningCli | undefined;
beforeAll(() => buildCli(), 120_000);
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-paused-'))));
afterEach(() => {
  batch?.kill('SIGKILL');
  batch = undefined;
  watching?.child.kill('SIGKILL');
  watching = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts the pausing batch; resolves once it says it paused at its cap. */
function pausedBatch(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dir], { cwd: ROOT });
  batch = child;
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('paused at 0.02\n')) resolve();
    });
    child.on('close', () => reject(new Error(`the batch exited before it paused: ${out}`)));
  });
}

describe('a batch paused at its cap, as the built agent-sm reads it', () => {
  it('inspect says it is paused and names agent-sm raise; watch says the same figures; the task not started is pending', async () => {
    await pausedBatch();
    const inspect = runBuiltCli(['inspect', dir]);
    expect(inspect.code).toBe(0);
    const lines = inspect.stdout.split('\n');
    // t0 ended ($0.012), t1 waits at the cap, t2 has not started.
    expect(lines[0]).toBe(
      `Batch ${dir}: 3 runs (1 running, 1 pending, 1 end_of_turn), $0.0120 billed (still running, paused at its cap)`,
    );
    const paused = `Paused at its cap: $0.0120 of $0.0200 ($0.0120 billed); raise with agent-sm raise ${dir} --total-usd 0.05`;
    expect(lines[1]).toBe(paused);
    expect(inspect.stdout).toMatch(/^ {2}t2 +pending +\$0\.0000$/m);
    expect(inspect.stdout).not.toContain('skipped');

    // watch, piped: the same line, from the same figures; the progress counts t2 pending.
    watching = startCli(['watch', dir]);
    await watching.seen(/progress: .*\n/);
    await watching.seen('Paused at its cap');
    expect(watching.stdout()).toMatch(/progress: 1\/3 finished, 1 pending, \$0\.0120 spent\n/);
    expect(watching.stdout()).toContain(`  ${paused}\n`);
    expect(watching.stdout()).not.toContain('skipped');

    // The command it names lets the batch go on: once raised, neither says paused any more.
    expect(runBuiltCli(['raise', dir, '--total-usd', '0.05']).code).toBe(0);
    expect(await watching.exited()).toBe(0);
    const after = runBuiltCli(['inspect', dir]);
    expect(after.stdout).not.toContain('Paused at its cap');
    expect(after.stdout.split('\n')[0]).toMatch(/^Batch .*: 3 runs \(3 end_of_turn\), \$0\.0360 billed$/);
    expect(fs.existsSync(path.join(dir, 'batch.paused'))).toBe(false);
  }, 60_000);

  it('a batch killed while paused is not paused: inspect says nothing of a cap to raise', async () => {
    await pausedBatch();
    batch!.kill('SIGKILL');
    await new Promise((resolve) => batch!.once('close', resolve));
    const inspect = runBuiltCli(['inspect', dir]);
    expect(inspect.stdout).not.toContain('Paused at its cap');
    expect(inspect.stdout).toMatch(/^ {2}t2 +skipped +\$0\.0000$/m);
  }, 60_000);
});

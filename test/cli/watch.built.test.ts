// `agent-sm watch <folder>` as the built executable, stdout a pipe: when it ends (every task
// reported: finished, skipped, cut off), --stay, and exit 2 on a file it cannot read.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeBatchManifest } from '../../lib/batch/keeping/batchManifest';
import { lockFolder, type FolderLock } from '../../lib/batch/keeping/lockFolder';
import { buildCli, runBuiltCli, startCli, type RunningCli } from '../helpers/builtCli';

let dir: string;
let running: RunningCli | undefined;
let lock: FolderLock | undefined;
beforeAll(() => buildCli(), 120_000);
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-watch-built-'));
});
afterEach(() => {
  running?.child.kill('SIGKILL');
  running = undefined;
  lock?.release();
  lock = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

const T = Date.UTC(2026, 0, 1, 12);
const move = (seq: number, from: string, to: string, description: string, data?: unknown): string =>
  `${JSON.stringify({ seq, from, to, description, at: T + seq * 1000, durationMs: 1000, forced: false, ...(data === undefined ? {} : { data }) })}\n`;
const started =
  move(1, 'Ready', 'WaitingForUserInput', 'ready') + move(2, 'WaitingForUserInput', 'SendingToLLM', 'send');
const ended =
  started +
  move(3, 'SendingToLLM', 'ProcessingLLMResponse', 'answer') +
  move(4, 'ProcessingLLMResponse', 'EndOfTurn', 'done');
const failed = started + move(3, 'SendingToLLM', 'Error', 'LLM request failed', { error: 'overloaded' });

/** A batch folder of `ids`, as runBatch writes it: its manifest, and its lock while it runs. */
function batchFolder(ids: string[], { running: held }: { running: boolean }): void {
  if (held) lock = lockFolder(dir, 'test batch');
  writeBatchManifest(dir, {
    startedAt: T,
    concurrency: 2,
    limits: { total: { maxCostUsd: 1 } },
    tasks: ids.map((id) => ({ id, file: `${id}.jsonl` })),
  });
}

describe('agent-sm watch <folder> (built executable, stdout a pipe)', () => {
  it('ends by itself once the batch is over with tasks skipped, naming them skipped, not "not started"', async () => {
    batchFolder(['a', 'b', 'c'], { running: true });
    fs.writeFileSync(path.join(dir, 'a.jsonl'), ended);
    fs.writeFileSync(path.join(dir, 'b.jsonl'), started);
    running = startCli(['watch', dir]);
    await running.seen('a: end_of_turn');
    fs.appendFileSync(path.join(dir, 'b.jsonl'), move(3, 'SendingToLLM', 'Error', 'failed', { error: 'overloaded' }));
    await running.seen('progress: 2/3 finished,');
    // c never starts: the batch stopped (its cap) and let go of the folder.
    lock!.release();
    lock = undefined;
    expect(await running.exited()).toBe(0);
    const lines = running.stdout().trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^\d\d:\d\d:\d\d {2}progress: 2\/3 finished, 1 skipped, \$0\.0000 spent$/);
    expect(running.stderr()).toBe('');
  }, 60_000);

  it('a batch that is over with a run whose file did not end: that run is cut off, and watch ends', async () => {
    batchFolder(['a', 'b'], { running: false });
    fs.writeFileSync(path.join(dir, 'a.jsonl'), failed);
    fs.writeFileSync(path.join(dir, 'b.jsonl'), started);
    const result = runBuiltCli(['watch', dir]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/a: error in SendingToLLM: LLM request failed: overloaded/);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(/progress: 1\/2 finished, 1 cut off, /);
  }, 60_000);

  it('--stay keeps watching a batch that is over, until Ctrl-C', async () => {
    batchFolder(['a', 'b'], { running: false });
    fs.writeFileSync(path.join(dir, 'a.jsonl'), ended);
    running = startCli(['watch', dir, '--stay']);
    await running.seen('progress: 1/2 finished, 1 skipped');
    expect(running.child.exitCode).toBeNull();
    running.child.kill('SIGINT');
    expect(await running.exited()).toBe(0);
  }, 60_000);

  it.each([
    [
      'a NUL hole',
      Buffer.concat([
        Buffer.from(started),
        Buffer.alloc(64),
        Buffer.from(`\n${move(3, 'SendingToLLM', 'Error', 'x')}`),
      ]),
      [],
    ],
    ['binary', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x0a]), []],
    [
      'a line over the limit',
      Buffer.from(`${started}${move(3, 'SendingToLLM', 'Error', 'x'.repeat(500))}`),
      ['--max-line-bytes', '300'],
    ],
  ])(
    'a run file with %s: exit 2, the file named on stderr, the rest still watched',
    (_what, bytes, extra) => {
      batchFolder(['a', 'b'], { running: false });
      fs.writeFileSync(path.join(dir, 'a.jsonl'), ended);
      fs.writeFileSync(path.join(dir, 'b.jsonl'), bytes);
      const result = runBuiltCli(['watch', dir, ...extra]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^agent-sm: error: .*b\.jsonl.*\n$/);
      expect(result.stdout).toContain('a: end_of_turn');
      // One file, the same.
      const single = runBuiltCli(['watch', path.join(dir, 'b.jsonl'), ...extra]);
      expect(single.code).toBe(2);
      expect(single.stderr).toMatch(/^agent-sm: error: .*b\.jsonl/);
    },
    60_000,
  );

  it('--salvage reads past the bad line instead: exit 0', () => {
    batchFolder(['b'], { running: false });
    fs.writeFileSync(
      path.join(dir, 'b.jsonl'),
      Buffer.concat([
        Buffer.from(started),
        Buffer.alloc(64),
        Buffer.from(`\n${move(3, 'SendingToLLM', 'Error', 'x')}`),
      ]),
    );
    const result = runBuiltCli(['watch', dir, '--salvage']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/warning: .*b\.jsonl/);
    expect(result.stdout).toMatch(/progress: 1\/1 finished/);
  }, 60_000);
});

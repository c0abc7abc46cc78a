import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeBatchManifest } from '../../lib/batch/keeping/batchManifest';
import { lockFolder } from '../../lib/batch/keeping/lockFolder';
import { requestRaise } from '../../lib/batch/raises/requestRaise';
import { main } from '../../lib/cli/main';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-watchp-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const T = Date.UTC(2026, 0, 1, 12);
const move = (seq: number, from: string, to: string, description: string, data?: unknown): string =>
  `${JSON.stringify({ seq, from, to, description, at: T + seq * 1000, durationMs: 1000, forced: false, ...(data === undefined ? {} : { data }) })}\n`;
const start = move(1, 'Ready', 'WaitingForUserInput', 'ready') + move(2, 'WaitingForUserInput', 'SendingToLLM', 'send');

function capture() {
  let out = '';
  let err = '';
  const waiters: Array<{ text: string; resolve: () => void }> = [];
  const check = (): void => {
    for (const w of [...waiters])
      if (out.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  return {
    io: { stdout: (t: string) => ((out += t), check()), stderr: (t: string) => void (err += t) },
    out: () => out,
    err: () => err,
    seen: (text: string) => new Promise<void>((resolve) => (waiters.push({ text, resolve }), check())),
  };
}

describe('agent-sm watch, plain lines (not a terminal)', () => {
  it('follows files that appear and grow, lines cut mid-write, prints failures with their reason, and ends with the batch', async () => {
    // The folder's lock, as a running batch holds it: the batch is not over until its runs end.
    const lock = lockFolder(dir, 'test batch');
    writeBatchManifest(dir, {
      startedAt: T,
      concurrency: 2,
      limits: { total: { maxCostUsd: 1 } },
      tasks: [
        { id: 'a', file: 'a.jsonl' },
        { id: 'b', file: 'b.jsonl' },
      ],
    });
    const c = capture();
    const done = main(['watch', dir], c.io);
    fs.writeFileSync(path.join(dir, 'a.jsonl'), start);
    await c.seen('a: started');
    const fail = move(3, 'SendingToLLM', 'Error', 'LLM request failed \u001b[2J', {
      error: 'overloaded',
      outcome: 'error',
    });
    fs.writeFileSync(path.join(dir, 'b.jsonl'), start + fail.slice(0, 30));
    await c.seen('b: started');
    expect(c.out()).not.toContain('b: error');
    fs.appendFileSync(path.join(dir, 'b.jsonl'), fail.slice(30));
    await c.seen('b: error in SendingToLLM: LLM request failed \\u001b[2J: overloaded');
    fs.appendFileSync(
      path.join(dir, 'a.jsonl'),
      move(3, 'SendingToLLM', 'ProcessingLLMResponse', 'answer', {
        usage: { costUsd: 0.2, inputTokens: 5, outputTokens: 1, llmCalls: 1 },
      }) + move(4, 'ProcessingLLMResponse', 'EndOfTurn', 'done', { outcome: 'end_of_turn' }),
    );
    expect(await done).toBe(0);
    lock.release();
    const lines = c.out().trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^\d\d:\d\d:\d\d {2}progress: 2\/2 finished, \$0\.2000 spent$/);
    expect(c.out()).toMatch(/\d\d:\d\d:\d\d {2}a: end_of_turn\n/);
    expect(c.out()).not.toContain('\u001b');
    expect(c.err()).toBe('');
  });

  it('--stay keeps watching after the end, until stopped; a single file is watched too', async () => {
    const file = path.join(dir, 'run.jsonl');
    fs.writeFileSync(
      file,
      start +
        move(3, 'SendingToLLM', 'ProcessingLLMResponse', 'answer') +
        move(4, 'ProcessingLLMResponse', 'EndOfTurn', 'done'),
    );
    const c = capture();
    const controller = new AbortController();
    const done = main(['watch', file, '--stay'], { ...c.io, signal: controller.signal });
    await c.seen('progress: 1/1 finished');
    fs.appendFileSync(
      file,
      move(5, 'EndOfTurn', 'WaitingForUserInput', 'next') + move(6, 'WaitingForUserInput', 'SendingToLLM', 'again'),
    );
    await c.seen('progress: 0/1 finished');
    controller.abort();
    expect(await done).toBe(0);
  });

  it('prints a line per raise of a paused cap (agent-sm raise <folder>) with its time and new cap', async () => {
    const lock = lockFolder(dir, 'test batch');
    writeBatchManifest(dir, {
      startedAt: T,
      concurrency: 1,
      limits: { total: { maxCostUsd: 0.1, whenSpent: 'pause' } as { maxCostUsd: number } },
      tasks: [{ id: 'a', file: 'a.jsonl' }],
    });
    fs.writeFileSync(path.join(dir, 'a.jsonl'), start);
    const c = capture();
    const done = main(['watch', dir], c.io);
    await c.seen('a: started');
    await requestRaise(dir, 0.25, () => T + 60_000);
    await c.seen('12:01:00  cap raised to $0.2500\n');
    await requestRaise(dir, 0.5, () => T + 120_000);
    await c.seen('12:02:00  cap raised to $0.5000\n');
    fs.appendFileSync(
      path.join(dir, 'a.jsonl'),
      move(3, 'SendingToLLM', 'EndOfTurn', 'done', { outcome: 'end_of_turn' }),
    );
    expect(await done).toBe(0);
    lock.release();
    // Each raise once, in order.
    expect(c.out().match(/cap raised to/g)).toHaveLength(2);
    expect(c.err()).toBe('');
  });

  it('a missing path is one error line, exit 2', async () => {
    const c = capture();
    expect(await main(['watch', path.join(dir, 'nope')], c.io)).toBe(2);
    expect(c.err()).toMatch(/^agent-sm: error: .*nope: no such file or folder to watch/);
  });
});

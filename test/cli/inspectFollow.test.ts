import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../lib/cli/main';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-follow-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const T = Date.UTC(2026, 0, 1, 12);
const move = (seq: number, from: string, to: string, description = `${from} to ${to}`): string =>
  `${JSON.stringify({ seq, from, to, description, at: T + seq * 1000, durationMs: 1000, forced: false })}\n`;

/** Captured output, with a way to wait for text to appear in it (no sleeps: resolved by the write itself). */
function capture(): {
  io: { stdout: (t: string) => void; stderr: (t: string) => void };
  out: () => string;
  err: () => string;
  seen: (text: string | RegExp) => Promise<void>;
} {
  let out = '';
  let err = '';
  const waiters: Array<{ test: (s: string) => boolean; resolve: () => void }> = [];
  const check = (): void => {
    for (const w of [...waiters])
      if (w.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  return {
    io: { stdout: (t) => ((out += t), check()), stderr: (t) => void (err += t) },
    out: () => out,
    err: () => err,
    seen: (text) =>
      new Promise<void>((resolve) => {
        const test = (s: string): boolean => (typeof text === 'string' ? s.includes(text) : text.test(s));
        waiters.push({ test, resolve });
        check();
      }),
  };
}

describe('agent-sm inspect --follow', () => {
  it('prints moves of a growing file as they are appended, a line cut mid-write once it is whole, and the summary on Ctrl-C', async () => {
    const file = path.join(dir, 'run.jsonl');
    fs.writeFileSync(file, move(1, 'Ready', 'WaitingForUserInput'));
    const c = capture();
    const controller = new AbortController();
    const done = main(['inspect', '--follow', file], { ...c.io, signal: controller.signal });
    await c.seen('Ready → WaitingForUserInput');
    expect(c.out()).not.toContain('SendingToLLM');
    fs.appendFileSync(file, move(2, 'WaitingForUserInput', 'SendingToLLM'));
    await c.seen('WaitingForUserInput → SendingToLLM');
    // A line cut mid-write is held until its end arrives.
    const third = move(3, 'SendingToLLM', 'Error', 'LLM request failed \u001b[2J');
    fs.appendFileSync(file, third.slice(0, 20));
    fs.appendFileSync(file, third.slice(20));
    await c.seen('SendingToLLM → Error');
    controller.abort();
    expect(await done).toBe(0);
    const out = c.out();
    expect(out.split('\n')[0]).toMatch(/^ +seq {2}time +move +in from +description$/);
    expect(out).toContain('LLM request failed \\u001b[2J');
    expect(out).not.toContain('\u001b');
    expect(out).toMatch(/FAILED: the run ended in Error at seq 3/);
    expect(c.err()).toBe('');
  });

  it('waits for a file that does not exist yet, and reads a file rewritten from the start again, saying so', async () => {
    const file = path.join(dir, 'later.jsonl');
    const c = capture();
    const controller = new AbortController();
    const done = main(['inspect', '--follow', file], { ...c.io, signal: controller.signal });
    await c.seen('description\n');
    fs.writeFileSync(file, move(1, 'Ready', 'WaitingForUserInput') + move(2, 'WaitingForUserInput', 'SendingToLLM'));
    await c.seen('WaitingForUserInput → SendingToLLM');
    fs.writeFileSync(file, move(1, 'Ready', 'WaitingForUserInput', 'again'));
    await c.seen(/Ready → WaitingForUserInput +1.0 s +again/);
    controller.abort();
    expect(await done).toBe(0);
    expect(c.err()).toMatch(/later\.jsonl: the file shrank; reading it again from the start/);
  });

  it('from standard input, prints each move as its line arrives, before the input ends', async () => {
    const c = capture();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* stdin(): AsyncGenerator<Uint8Array> {
      yield Buffer.from(move(1, 'Ready', 'WaitingForUserInput'));
      await gate;
      yield Buffer.from(move(2, 'WaitingForUserInput', 'EndOfTurn'));
    }
    const done = main(['inspect', '--follow', '-'], { ...c.io, stdin: stdin() });
    await c.seen('Ready → WaitingForUserInput');
    expect(c.out()).not.toContain('EndOfTurn');
    release();
    expect(await done).toBe(0);
    expect(c.out()).toContain('WaitingForUserInput → EndOfTurn');
  });

  it('refuses --follow with --json', async () => {
    const c = capture();
    expect(await main(['inspect', '--follow', '--json', '-'], c.io)).toBe(2);
    expect(c.err()).toMatch(/--follow prints moves as text; it cannot be combined with --json/);
  });
});

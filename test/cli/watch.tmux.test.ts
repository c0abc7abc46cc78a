// `agent-sm watch` in a real terminal: tmux (its own server, on its own socket) runs the
// command against a batch running in another process, which the test advances one LLM call
// at a time through its stdin; what is on screen is read with `capture-pane -p`.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openTmuxTerminal, type TmuxTerminal } from '../helpers/tmuxTerminal';

const ROOT = path.join(__dirname, '..', '..');
let terminal: TmuxTerminal | undefined;
let dir: string;
let batch: ChildProcessWithoutNullStreams | undefined;
let batchOut = '';

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-watch-'));
});
afterEach(() => {
  terminal?.close();
  terminal = undefined;
  batch?.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Polls `read` until `done` holds of it; fails with what was last seen after the overall limit. */
async function until(
  what: string,
  read: () => string,
  done: (text: string) => boolean,
  limitMs = 60_000,
): Promise<string> {
  const start = Date.now();
  let text = read();
  while (!done(text)) {
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}; last seen:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    text = read();
  }
  return text;
}

const screen = (): string => terminal!.screen();
const step = (): void => void batch!.stdin.write('go\n');

describe('agent-sm watch in a terminal', () => {
  it('shows a running batch live, redrawn in place: progress, spend against the cap, runs in flight, failures; ends with the batch', async () => {
    batch = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test', 'fixtures', 'gatedBatch.ts'), dir], {
      cwd: ROOT,
    });
    batch.stdout.on('data', (d: Buffer) => (batchOut += d.toString()));
    await until(
      'both first runs to wait',
      () => batchOut,
      (t) => t.includes('waiting alpha') && t.includes('waiting bravo'),
    );

    terminal = openTmuxTerminal('watch', 110, 30, 'bash --norc --noprofile');
    terminal.tmux(
      'send-keys',
      '-t',
      'w',
      `cd ${ROOT} && PS1='$ ' && clear && node --import tsx lib/cli/bin.ts watch ${dir}; echo "WATCH-EXITED $?"`,
      'Enter',
    );
    let text = await until('the board', screen, (t) => /In flight \(2\)/.test(t) && t.includes('Progress'));
    expect(text).toMatch(/Progress +\[░+\] 0\/3 finished · 2 in flight · 1 pending · 0 failed/);
    expect(text).toMatch(/Spend +\[░+\] cost \$0\.0000 of \$2\.00 \(0%\)/);
    expect(text).toMatch(/ alpha +SendingToLLM +for /);
    expect(text).toMatch(/ bravo +SendingToLLM +for /);

    step(); // alpha's call answers: alpha ends its turn, charlie starts
    text = await until(
      'alpha to finish',
      screen,
      (t) => t.includes('1/3 finished') && / charlie +SendingToLLM/.test(t),
    );
    expect(text).toMatch(/cost \$0\.2500 of \$2\.00 \(13%\)/);
    expect(text).not.toMatch(/ alpha +SendingToLLM/);

    step(); // bravo's call fails
    text = await until('bravo to fail', screen, (t) => t.includes('Failures (1)'));
    expect(text).toMatch(
      /\d\d:\d\d:\d\d {2}bravo: error in SendingToLLM: sendUserMessage failed after 1 attempt: model overloaded/,
    );
    expect(text).toMatch(/2\/3 finished · 1 in flight · 0 pending · 1 failed/);

    step(); // charlie answers: the batch is over, and watch ends by itself
    text = await until('watch to end', screen, (t) => t.includes('WATCH-EXITED'));
    expect(text).toContain('WATCH-EXITED 0');
    expect(text).toMatch(/3\/3 finished · 0 in flight/);
    expect(text).toContain('(batch ended)');
    // Redrawn in place: one board on screen, however many times it was drawn.
    expect(text.match(/Progress/g)).toHaveLength(1);
  }, 120_000);
});

// runBatch({ progress: true }) as a user sees it: the fixture batch run in a child process, once
// with standard error a pipe (nothing drawn) and once in a real terminal (tmux on its own socket,
// the screen read with `capture-pane -p`), advanced through its standard input.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch } from '../../lib/batch/runBatch';
import { submitBatch } from '../../lib/integrations/bullmq/submitBatch';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { openTmuxTerminal, type TmuxTerminal } from '../helpers/tmuxTerminal';

const ROOT = path.join(__dirname, '..', '..');
const FIXTURE = path.join('test', 'fixtures', 'batch', 'progressBatch.ts');
// The fixture's runs that reach their tool: all but task-4, whose model call fails.
const GATED = 11;
const REPORT = 'report: 11 ended, 1 failed, $1.1000';

/** Polls `read` until `done` holds of it; fails with what was last seen after the overall limit. */
async function until(what: string, read: () => string, done: (text: string) => boolean, limitMs = 60_000) {
  const start = Date.now();
  let text = read();
  while (!done(text)) {
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}; last seen:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    text = read();
  }
  return text;
}

describe('runBatch({ progress: true })', () => {
  it('on a pipe draws nothing: standard error stays empty, the batch runs', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.stdin.end('go\n'.repeat(GATED));
    expect(await closed).toBe(0);
    expect(stdout).toContain(REPORT);
    expect(stderr).toBe('');
  }, 60_000);

  describe('in a terminal', () => {
    let terminal: TmuxTerminal | undefined;
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-progress-'));
    });
    afterEach(() => {
      terminal?.close();
      terminal = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('draws one line in place: finished/total, failed, in flight, spend of the cap; the last one stays', async () => {
      const out = path.join(dir, 'stdout.txt');
      // The `go` lines typed into the terminal are not echoed (stty -echo), so the screen holds the line alone.
      const term = openTmuxTerminal(
        'progress',
        120,
        20,
        `cd ${ROOT} && stty -echo && node --import tsx ${FIXTURE} > ${out}; echo "EXITED $?"; sleep 600`,
      );
      terminal = term;
      const screen = (): string => term.screen();
      const go = (n: number): void => {
        for (let i = 0; i < n; i++) term.tmux('send-keys', '-t', 'w', 'go', 'Enter');
      };

      // Three runs wait in their tool, nothing spent on their second call yet.
      await until('the first line', screen, (t) =>
        t.includes('0/12 done | 0 failed | 3 in flight | $0.1500 of $5.0000'),
      );

      // Six runs let through: they end, task-4 fails on its way, three more wait in their tool.
      go(6);
      let text = await until('the line mid-batch', screen, (t) =>
        t.includes('7/12 done | 1 failed | 3 in flight | $0.7500 of $5.0000'),
      );
      expect(text).toMatch(/^batch \[=+-+\] 7\/12 done/m);

      go(GATED - 6);
      text = await until('the batch to end', screen, (t) => t.includes('EXITED'));
      expect(text).toContain('EXITED 0');
      expect(text).toMatch(/^batch \[=+\] 12\/12 done \| 1 failed \| 0 in flight \| \$1\.1000 of \$5\.0000$/m);
      // Redrawn in place: one line on screen, however many times it was drawn.
      expect(text.match(/batch \[/g)).toHaveLength(1);
      expect(fs.readFileSync(out, 'utf8')).toContain(REPORT);
    }, 120_000);
  });

  it.each([['yes'], [1], [null], [{}]])('refuses progress: %p by name, saying what it takes', async (value) => {
    const refused = runBatch([], { progress: value } as never);
    await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(refused).rejects.toThrow(/`progress`.*true or false/);
  });

  it('submitBatch() refuses progress by name and says what to use instead', async () => {
    await expect(
      submitBatch([], { connection: 'redis://127.0.0.1:1', name: 'q', progress: true } as never),
    ).rejects.toThrow(/`progress`.*the producer draws no progress line: follow the batch with `onProgress`/);
  });
});

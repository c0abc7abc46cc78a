import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { FolderLockedError } from '../../lib/subpaths/batch';
import { LOCK_FILE, lockFolder } from '../../lib/subpaths/internal';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'batch', 'batchHoldingFolder.ts');

function start(dir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dir], {
    cwd: path.resolve(__dirname, '../..'),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const next = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve) => {
      const onLine = (line: string): void => {
        const m = pattern.exec(line);
        if (m === null) return;
        lines.off('line', onLine);
        resolve(m);
      };
      lines.on('line', onLine);
    });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, next, exited };
}

describe('one history folder, one batch', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-lock-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a second batch process on the same folder is refused, overwriteHistory or not, naming the first; the first writes alone', async () => {
    const first = start(dir);
    try {
      await first.next(/^running$/);
      const second = start(dir);
      const [, message] = (await second.next(/^(?:error|report) (.*)$/))!;
      await second.exited;
      expect(message).toMatch(
        new RegExp(
          `^history folder .* is in use by batch runBatch in .* \\(pid ${first.child.pid} on .*\\): two batches never write into one folder`,
        ),
      );
      first.child.stdin!.write('go\n');
      const report = JSON.parse((await first.next(/^report (.*)$/))[1]!) as Array<{ outcome: string }>;
      expect(report.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn', 'end_of_turn']);
      // Every file holds the first batch's lines alone, and the lock is gone with it.
      for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')))
        expect(fs.readFileSync(path.join(dir, file), 'utf8')).not.toContain(`done by ${second.child.pid}`);
      expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
    }
  }, 60_000);

  it('a lock left by a process that is gone is taken over; a shared lock is joined by its own batch only', async () => {
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => gone.once('exit', r));
    fs.writeFileSync(
      path.join(dir, LOCK_FILE),
      JSON.stringify({ pid: gone.pid, host: os.hostname(), batch: 'old', since: 'then' }),
    );
    const lock = lockFolder(dir, 'new');
    expect(JSON.parse(fs.readFileSync(lock.file, 'utf8'))).toMatchObject({ pid: process.pid, batch: 'new' });
    expect(() => lockFolder(dir, 'other')).toThrow(FolderLockedError);
    expect(() => lockFolder(dir, 'new', { shared: true })).not.toThrow();
    expect(() => lockFolder(dir, 'other', { shared: true })).toThrow(/in use by batch new/);
    lock.release();
    expect(fs.existsSync(lock.file)).toBe(false);
  });
});

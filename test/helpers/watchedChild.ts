// A TypeScript fixture run in its own process (through tsx, from the repository's root), and a
// way to wait for what it prints: the CLI tests start a batch this way, then answer or raise it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

export interface WatchedChild {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the first match of `pattern` in what it printed; rejects if it exits first. */
  seen(pattern: RegExp): Promise<RegExpExecArray>;
  /** Its standard output so far. */
  out(): string;
  /** Resolves once it has exited and its pipes are drained. */
  closed: Promise<void>;
}

/** Runs `fixture` (a path from the repository's root) with `args` and `env` added to this process's. */
export function spawnWatched(fixture: string, args: string[], env: Record<string, string> = {}): WatchedChild {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, fixture), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const seen = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = pattern.exec(out);
        if (match !== null) resolve(match);
        return match !== null;
      };
      if (check()) return;
      const onData = (): void => {
        if (check()) child.stdout.off('data', onData);
      };
      child.stdout.on('data', onData);
      child.on('close', () => reject(new Error(`the batch exited before ${pattern}: ${out}${err}`)));
    });
  const closed = new Promise<void>((resolve) =>
    child.exitCode !== null ? resolve() : child.once('close', () => resolve()),
  );
  return { child, seen, out: () => out, closed };
}

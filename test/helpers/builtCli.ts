// The `agent-sm` executable as users get it: dist/cli.cjs, bundled from lib/cli/bin.ts by the
// cli entry of tsup.config.ts (what `npm run build` makes), run in a child process whose stdout
// is a pipe. Built fresh by each test file that uses it (about two seconds), so a test never
// runs a stale bundle; written beside dist/ and renamed in, so parallel test files never read a
// half-written one.
import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
/** The built executable's path. */
export const CLI = path.join(ROOT, 'dist', 'cli.cjs');

/** Builds dist/cli.cjs from the sources as they are now. */
export function buildCli(): void {
  const out = path.join(ROOT, 'dist', `.cli-build-${process.pid}`);
  const script = [
    "const { build } = require('tsup');",
    "const cli = require('./tsup.config.ts').default.find((c) => c.entry && c.entry.cli !== undefined);",
    `build({ ...cli, config: false, outDir: ${JSON.stringify(out)}, silent: true })`,
    '  .catch((e) => { console.error(e); process.exit(1); });',
  ].join('\n');
  try {
    execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    fs.renameSync(path.join(out, 'cli.cjs.map'), `${CLI}.map`);
    fs.renameSync(path.join(out, 'cli.cjs'), CLI);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/**
 * Builds entries of the library into dist/ (`{ 'postgres/index': 'lib/integrations/postgres/index.ts' }`),
 * JavaScript only (no types), as tsup.config.ts's library entry does: for the executable's own
 * loading of a subpath (`agent-sm --store` loads `agent-state-machine/postgres`, which loads the
 * main entry and `agent-state-machine/internal`). The main entry and every subpath of the library
 * itself are built with them, split into shared chunks as in the package: an integration imports
 * them by name, and a dist/ without them (a fresh clone) would fail to load it.
 */
export function buildLibrary(entries: Record<string, string>): void {
  const out = path.join(ROOT, 'dist', `.lib-build-${process.pid}`);
  const script = [
    "const { build } = require('tsup');",
    "const lib = require('./tsup.config.ts').default.find((c) => c.entry && c.entry.index !== undefined);",
    "const core = Object.fromEntries(Object.entries(lib.entry).filter(([, from]) => !from.startsWith('lib/integrations/')));",
    `build({ ...lib, entry: { ...core, ...${JSON.stringify(entries)} }, dts: false, clean: false, config: false, outDir: ${JSON.stringify(out)}, silent: true })`,
    '  .catch((e) => { console.error(e); process.exit(1); });',
  ].join('\n');
  try {
    execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    // Chunks first, entries last: a file renamed in never points at a chunk not there yet (the
    // chunks' names are hashes of their content, so a chunk another test file reads stays as it is).
    const files = (fs.readdirSync(out, { recursive: true }) as string[]).filter((f) =>
      fs.statSync(path.join(out, f)).isFile(),
    );
    const isEntry = (f: string): boolean => /(^|[/\\])index\.(c|m)js(\.map)?$/.test(f);
    for (const file of [...files.filter((f) => !isEntry(f)), ...files.filter(isEntry)]) {
      const target = path.join(ROOT, 'dist', file);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.renameSync(path.join(out, file), target);
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/** A running `agent-sm`: what it wrote so far, and ways to wait for more or for its end. */
export interface RunningCli {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout holds `text`; rejects if the process exits first or after `limitMs`. */
  seen(text: string | RegExp, limitMs?: number): Promise<void>;
  /** Resolves to the exit code (or the signal's name) once it exits; rejects after `limitMs`. */
  exited(limitMs?: number): Promise<number | string>;
}

/** Starts `node dist/cli.cjs ...args` with stdin, stdout and stderr pipes. */
export function startCli(args: readonly string[], options: { cwd?: string } = {}): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? ROOT, env: { ...process.env } });
  let out = '';
  let err = '';
  let exit: number | string | undefined;
  const listeners = new Set<() => void>();
  const changed = (): void => listeners.forEach((l) => l());
  child.stdout.on('data', (d: Buffer) => ((out += d.toString()), changed()));
  child.stderr.on('data', (d: Buffer) => ((err += d.toString()), changed()));
  child.on('close', (code, signal) => ((exit = code ?? signal ?? 'unknown'), changed()));
  const wait = <T>(what: string, check: () => T | undefined, limitMs: number): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const test = (): void => {
        let value: T | undefined;
        try {
          value = check();
        } catch (error) {
          done();
          reject(error as Error);
          return;
        }
        if (value === undefined) return;
        done();
        resolve(value);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${limitMs} ms waiting for ${what}; stdout:\n${out}\nstderr:\n${err}`));
      }, limitMs);
      const done = (): void => {
        clearTimeout(timer);
        listeners.delete(test);
      };
      listeners.add(test);
      test();
    });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    seen: (text, limitMs = 30_000) =>
      wait(
        `${String(text)} on stdout`,
        () => {
          if (typeof text === 'string' ? out.includes(text) : text.test(out)) return true;
          if (exit !== undefined)
            throw new Error(
              `agent-sm exited (${exit}) before printing ${String(text)}; stdout:\n${out}\nstderr:\n${err}`,
            );
          return undefined;
        },
        limitMs,
      ).then(() => undefined),
    exited: (limitMs = 30_000) => wait('agent-sm to exit', () => exit, limitMs),
  };
}

/**
 * Runs `node dist/cli.cjs ...args` to its end without blocking this process (servers and
 * workers of the test go on answering meanwhile): its exit code (or the signal that ended it) and what it printed.
 */
export async function runCli(
  args: readonly string[],
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const running = startCli(args);
  const code = await running.exited();
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}

/** Runs `node dist/cli.cjs ...args` to its end, stdout a pipe; one still running after 30 s is killed (status null). */
export function runBuiltCli(
  args: readonly string[],
  options: { cwd?: string; input?: string | Buffer } = {},
): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? ROOT,
    encoding: 'utf8',
    ...(options.input === undefined ? {} : { input: options.input }),
    maxBuffer: 256 * 1024 * 1024,
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { copyPackageDist } from './packageBuild';

const ROOT = path.resolve(__dirname, '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'install');

/** What a command printed and how it ended. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command without blocking this process (the tests serve HTTP meanwhile). The environment
 * is this process's without npm's `npm_*` variables: `npm test` sets them (the project's prefix
 * among them), and an `npm install` run from here must act in its own folder as a user's would.
 */
export function run(
  file: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  timeoutMs = 240_000,
): Promise<CommandResult> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd, env: { ...clean, ...env }, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({
          code,
          stdout,
          stderr: error !== null && typeof error.code !== 'number' ? `${stderr}\n${error.message}` : stderr,
        });
      },
    );
  });
}

/**
 * Puts the package's build (`packageDist`: as `npm run build` makes it, but leaving the
 * project's dist/ to test/package.test.ts, which may run at the same time) into
 * `work`/package and packs it as `npm publish` would. Returns the tarball's path.
 */
export async function packLibrary(work: string): Promise<string> {
  const stage = path.join(work, 'package');
  fs.mkdirSync(stage, { recursive: true });
  copyPackageDist(path.join(stage, 'dist'));
  for (const file of ['package.json', 'README.md', 'LICENSE'])
    fs.copyFileSync(path.join(ROOT, file), path.join(stage, file));
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], stage);
  if (packed.code !== 0) throw new Error(`npm pack failed (exit ${packed.code}):\n${packed.stderr}`);
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  return path.join(work, filename);
}

/**
 * An empty project in `dir` (with the scripts and consumers of test/fixtures/install), then a
 * plain `npm install` of `specs` there, as a user runs it: no --force, no --legacy-peer-deps.
 * `--prefer-offline` only lets npm take what its cache already holds.
 */
export async function installInEmptyProject(dir: string, specs: string[]): Promise<CommandResult> {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2)}\n`,
  );
  for (const file of fs.readdirSync(FIXTURES)) fs.copyFileSync(path.join(FIXTURES, file), path.join(dir, file));
  return run('npm', ['install', ...specs, '--no-audit', '--no-fund', '--prefer-offline'], dir);
}

/**
 * The lines of npm's output that report a conflict about this package: any ERESOLVE (npm's
 * word for a peer range it could not satisfy, fatal or "overriding"), and any warning that names
 * agent-state-machine.
 */
export function peerProblems(result: CommandResult): string[] {
  return `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((line) => /ERESOLVE/.test(line) || (/\bwarn/i.test(line) && line.includes('agent-state-machine')));
}

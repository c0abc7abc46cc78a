// The package's dist/ as `npm run build` makes it (tsup.config.ts: every entry, both module
// kinds, types), built once per state of its sources and kept beside dist/ as .dist-<key>/:
// the package test and each install test used to build it anew (45–90 s each, five times in
// a CI run of both Nodes), though the sources had not changed between them. The key is a hash
// of every input of the build (lib/, states/, the package and lock files, the tsup and
// TypeScript configs), so a change to any of them builds again; the output does not depend on
// the Node that runs the tests (tsup.config.ts fixes the target). Built at the depth of dist/,
// so that its source maps' paths (../lib/…) hold in a copy at dist/.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const INPUT_DIRS = ['lib', 'states'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsup.config.ts', 'tsconfig.json'];

/** A hash of everything the build reads from the project. */
function sourceKey(): string {
  const hash = createHash('sha256');
  const files = [
    ...INPUT_FILES,
    ...INPUT_DIRS.flatMap((dir) =>
      (fs.readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]).map((f) => path.join(dir, f)),
    ),
  ]
    .filter((f) => fs.statSync(path.join(ROOT, f)).isFile())
    .sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(fs.readFileSync(path.join(ROOT, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 20);
}

/**
 * The path of a dist/ built from the sources as they are now, built first if no earlier test
 * built these sources. Written beside its final name and renamed in, so a test file running at
 * the same time never reads a half-built one.
 */
export function packageDist(): string {
  const dist = path.join(ROOT, `.dist-${sourceKey()}`);
  if (fs.existsSync(dist)) return dist;
  const out = `${dist}.building-${process.pid}`;
  try {
    execFileSync(
      process.execPath,
      [path.join(ROOT, 'node_modules/tsup/dist/cli-default.js'), '--out-dir', out, '--silent'],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        // Eleven entries with their types: on 2 loaded cores the declaration build alone passed 240 s once.
        timeout: 420_000,
      },
    );
    // Builds of other sources are of no further use (a working tree's earlier states).
    for (const name of fs.readdirSync(ROOT))
      if (/^\.dist-[0-9a-f]+$/.test(name)) fs.rmSync(path.join(ROOT, name), { recursive: true, force: true });
    try {
      fs.renameSync(out, dist);
    } catch (error) {
      // Another test file built the same sources first: theirs is the same.
      if (!fs.existsSync(dist)) throw error;
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
  return dist;
}

/** Makes `target` (a package's dist/) a copy of the build of the sources as they are now. */
export function copyPackageDist(target: string): void {
  const dist = packageDist();
  fs.rmSync(target, { recursive: true, force: true });
  fs.cpSync(dist, target, { recursive: true });
}

// Which build of the library the suites time. Users run the bundle tsup makes (`npm run
// build`), so `npm run bench` builds that bundle first — with the package's own
// tsup.config.ts (same esbuild target), CommonJS only, no type declarations, into
// .bench-tmp/ so that dist/ is left alone — and every suite loads it through BENCH_LIB.
// A suite started on its own, without BENCH_LIB, loads lib/index.ts through tsx instead.
import path from 'node:path';
import type * as LibraryModule from '../lib/index';
import { ROOT } from './harness';

export type Library = typeof LibraryModule;

/** Where `buildLibrary` puts the bundle. */
export const BUILD_DIR = path.join(ROOT, '.bench-tmp', 'lib-build');

/** The library the suites measure: the module BENCH_LIB names, or the TypeScript source. */
export function loadLibrary(): Library {
  const override = process.env.BENCH_LIB;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a module named at run time, loaded synchronously
  return require(override === undefined || override === '' ? '../lib/index' : path.resolve(ROOT, override)) as Library;
}

/** What `loadLibrary` will load, for the report. */
export function describeLibrary(): string {
  const override = process.env.BENCH_LIB;
  if (override === undefined || override === '') return 'lib/index.ts, transpiled on the fly by tsx';
  const file = path.resolve(ROOT, override);
  if (path.dirname(file) === BUILD_DIR)
    return `tsup bundle of lib/index.ts (tsup.config.ts, CommonJS): ${path.relative(ROOT, file)}`;
  return `${path.relative(ROOT, file)} (BENCH_LIB)`;
}

/** Bundles lib/index.ts as `npm run build` would, and returns the path of the CommonJS file. */
export async function buildLibrary(): Promise<string> {
  const { build } = await import('tsup');
  const cwd = process.cwd();
  process.chdir(ROOT); // tsup finds tsup.config.ts in the working directory
  try {
    await build({
      entry: { index: 'lib/index.ts' },
      format: ['cjs'],
      outDir: BUILD_DIR,
      dts: false,
      sourcemap: false,
      clean: true,
      silent: true,
    });
  } finally {
    process.chdir(cwd);
  }
  return path.join(BUILD_DIR, 'index.cjs');
}

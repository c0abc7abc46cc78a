// Which build of the library the suites time. Users run the bundle tsup makes (`npm run
// build`), so `npm run bench` builds that bundle first — with the package's own
// tsup.config.ts (same esbuild target), CommonJS only, no type declarations, into
// .bench-tmp/ so that dist/ is left alone — and every suite loads it through BENCH_LIB.
// A suite started on its own, without BENCH_LIB, loads lib/index.ts through tsx instead.
// The suites time the main entry and `agent-state-machine/history` (its sink), one Library.
import path from 'node:path';
import type { Options } from 'tsup';
import type * as MainModule from '../lib/index';
import type * as HistoryModule from '../lib/subpaths/history';
import { bundle } from './bundle';
import { ROOT } from './harness';

export type Library = typeof MainModule & typeof HistoryModule;

/** Where `buildLibrary` puts the bundle. */
export const BUILD_DIR = path.join(ROOT, '.bench-tmp', 'lib-build');

/**
 * The library the suites measure: the main entry BENCH_LIB names with the history subpath built
 * beside it (history/index.cjs), or the TypeScript sources.
 */
export function loadLibrary(): Library {
  const override = process.env.BENCH_LIB;
  const main = override === undefined || override === '' ? '../lib/index' : path.resolve(ROOT, override);
  const history =
    override === undefined || override === ''
      ? '../lib/subpaths/history'
      : path.join(path.dirname(main), 'history', 'index.cjs');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- modules named at run time, loaded synchronously
  return { ...(require(main) as typeof MainModule), ...(require(history) as typeof HistoryModule) };
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

/**
 * Bundles lib/index.ts and the history subpath as `npm run build` would (one build, shared
 * chunks), and returns the path of the main entry's CommonJS file.
 */
export async function buildLibrary(): Promise<string> {
  const entry = { index: 'lib/index.ts', 'history/index': 'lib/subpaths/history.ts' };
  await bundle(entry, BUILD_DIR, async () => ({ ...(await packageBuildOptions('library')), splitting: true }));
  return path.join(BUILD_DIR, 'index.cjs');
}

/**
 * The package's own tsup settings (tsup.config.ts: target, keepNames, externals) of its library
 * or CLI build, with tsup's reading of config files turned off. Left on, tsup runs every build
 * of the config (library and CLI) with the bench's entry and folder, both at once into the same
 * folder, and a bundle could be written twice over itself (a file with another's tail).
 * Call with the working directory at ROOT.
 */
export async function packageBuildOptions(which: 'library' | 'cli'): Promise<Options> {
  // Loaded by path: tsup.config.ts is outside the type-checked folders.
  const loaded = (await import(path.join(ROOT, 'tsup.config.ts'))) as { default: Options[] | { default: Options[] } };
  const configs = Array.isArray(loaded.default) ? loaded.default : loaded.default.default;
  const { entry: _entry, ...settings } = configs[which === 'library' ? 0 : 1]!;
  return { ...settings, config: false };
}

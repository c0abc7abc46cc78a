// One way to bundle a bench file (or the package's own build) for a child process to load: tsup
// run from the repository's root, CommonJS, no declarations or source maps, into a folder of
// its own. The transition candidates, the meter's sides, the CLI and the library all use it.
import type { Options } from 'tsup';
import { ROOT } from './harness';

/** Every dependency inlined: a bundle a child loads with nothing else on its path. */
export const SELF_CONTAINED: Options = {
  config: false,
  platform: 'node',
  target: 'node20',
  outExtension: () => ({ js: '.cjs' }),
  noExternal: [/.*/],
};

/**
 * Bundles `entry` (names to files under ROOT) into `outDir` with `settings` (SELF_CONTAINED, or
 * the package's own from `packageBuildOptions`, read once the working directory is ROOT). The
 * folder is emptied first unless `clean` is false (bundles built into it one by one).
 */
export async function bundle(
  entry: Record<string, string>,
  outDir: string,
  settings: Options | (() => Promise<Options>),
  { clean = true }: { clean?: boolean } = {},
): Promise<void> {
  const { build } = await import('tsup');
  const cwd = process.cwd();
  process.chdir(ROOT); // tsup reads the entries, and tsup.config.ts lib/, from the working directory
  try {
    await build({
      ...(typeof settings === 'function' ? await settings() : settings),
      entry,
      format: ['cjs'],
      outDir,
      dts: false,
      sourcemap: false,
      clean,
      silent: true,
    });
  } finally {
    process.chdir(cwd);
  }
}

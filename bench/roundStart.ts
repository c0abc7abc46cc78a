// The turn core at this round's start and now, bundled the same way, for timing side by side.
//
// ROUND_START is the last commit before this round's first work (round 4: issues 34–40): the
// README's bench block of round 3 (2258f49, 2026-11-24), whose library is that of 8d60221, the
// commit that block measured. The next commit, ec4a9d3 (2026-11-27), is the first of round 4.
//
// Its lib/ and states/ (or another commit's: `turnCoreBase`) are taken with `git archive` into
// .bench-tmp/turn-core/base/, and
// each tree (that one and the working tree) is bundled by tsup as `bench/library.ts` bundles the
// library (CommonJS, target node20, dependencies and peers left to node_modules), from an entry
// that exports the adapter, the scripted agent and `mirrorAISDK` from their own files; the
// integration's `agent-state-machine` import is that tree's lib/index.ts, so each bundle holds
// one copy of its own library.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AgentWithStateMachine } from '../lib/agent/AgentWithStateMachine';
import type { mirrorAISDK } from '../lib/integrations/ai-sdk/mirrorAISDK';
import type { Options } from 'tsup';
import { bundle } from './bundle';
import { ROOT } from './harness';
import { packageBuildOptions } from './library';

export const ROUND_START = '2258f490cd48ee8d0821857c4ef41695a21d8265';

/** The commit the turn core is set beside, named for the table (`label`) and the targets (`short`). */
export interface TurnCoreBase {
  readonly commit: string;
  readonly label: string;
  readonly short: string;
}

/**
 * The commit today's turn core is set beside: ROUND_START, or `BENCH_TURNCORE_BASE` (a commit
 * or tag whose lib/ builds against today's node_modules), to measure against another, such as
 * the commit an issue names: `BENCH_TURNCORE_BASE=d417ba3 npm run bench -- turncore`.
 */
export function turnCoreBase(): TurnCoreBase {
  const given = process.env.BENCH_TURNCORE_BASE;
  if (given === undefined || given === '')
    return {
      commit: ROUND_START,
      label: `the round start's bundle (${ROUND_START.slice(0, 7)})`,
      short: 'round start',
    };
  let commit: string;
  try {
    commit = execFileSync('git', ['rev-parse', '--verify', '--quiet', `${given}^{commit}`], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
  } catch {
    throw new Error(
      `BENCH_TURNCORE_BASE=${JSON.stringify(given)} is not a commit of this repository: give a commit id or a tag, or leave it out to measure against the round start (${ROUND_START.slice(0, 7)})`,
    );
  }
  return { commit, label: `the bundle of ${commit.slice(0, 7)} (BENCH_TURNCORE_BASE)`, short: commit.slice(0, 7) };
}

export const TURN_CORE_DIR = path.join(ROOT, '.bench-tmp', 'turn-core');

/** What each bundle exports (the entry below). */
export interface TurnCore {
  AgentWithStateMachine: typeof AgentWithStateMachine;
  mirrorAISDK: typeof mirrorAISDK;
}

async function bundleCore(name: 'old' | 'new', tree: string): Promise<string> {
  const entry = path.join(TURN_CORE_DIR, `${name}-entry.ts`);
  const lib = (file: string): string => JSON.stringify(path.join(tree, 'lib', file));
  writeFileSync(
    entry,
    [
      `export { AgentWithStateMachine } from ${lib('agent/AgentWithStateMachine')};`,
      `export { mirrorAISDK } from ${lib('integrations/ai-sdk/mirrorAISDK')};`,
      '',
    ].join('\n'),
  );
  // Dependencies and peers of package.json stay external, as in bench/library.ts. As the
  // package's library is built (tsup.config.ts): keepNames too, which costs every closure a
  // defineProperty as it is made, so the two bundles are timed as users run them.
  const settings = async (): Promise<Options> => {
    const { keepNames } = await packageBuildOptions('library');
    return {
      config: false,
      ...(keepNames === undefined ? {} : { keepNames }),
      platform: 'node',
      target: 'node20',
      outExtension: () => ({ js: '.cjs' }),
      // The library by its own name, as the integrations import it: the main entry and its
      // subpaths (lib/subpaths/<name>.ts; the round start had none). An alias would not do: it
      // maps `agent-state-machine/history` to `<lib/index.ts>/history`.
      esbuildPlugins: [
        {
          name: 'library-by-name',
          setup(b) {
            b.onResolve({ filter: /^agent-state-machine(\/[a-z-]+)?$/ }, (args) => {
              const sub = args.path.slice('agent-state-machine/'.length);
              return { path: path.join(tree, 'lib', sub === '' ? 'index.ts' : path.join('subpaths', `${sub}.ts`)) };
            });
          },
        },
      ],
    };
  };
  await bundle({ [name]: entry }, TURN_CORE_DIR, settings, { clean: false });
  return path.join(TURN_CORE_DIR, `${name}.cjs`);
}

/** Bundles the turn core of `base` (a commit: `turnCoreBase().commit`) and today's; returns their files. */
export async function buildTurnCores(base: string): Promise<{ old: string; now: string }> {
  rmSync(TURN_CORE_DIR, { recursive: true, force: true });
  const tree = path.join(TURN_CORE_DIR, 'base');
  mkdirSync(tree, { recursive: true });
  const tar = execFileSync('git', ['archive', '--format=tar', base, 'lib', 'states', 'package.json'], {
    cwd: ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', tree], { input: tar });
  return { old: await bundleCore('old', tree), now: await bundleCore('new', ROOT) };
}

export { loadTurnCore } from './turnCoreSides';

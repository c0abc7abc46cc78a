// Bundles each candidate of bench/candidates/ into one CommonJS file with every dependency
// inlined (the library from lib/ with tsup.config.ts's target, eventemitter3, xstate, …), then
// gives each row of a table its own copy of its file. Node caches modules by file name, so two
// copies are two modules: separate functions, separate JIT feedback — the floor's emit and the
// library's emit are no longer the same eventemitter3 function warmed by both.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { bundle, SELF_CONTAINED } from '../bundle';
import { ROOT } from '../harness';
import type { CandidateFactory } from './Runner';

export const CANDIDATE_DIR = path.join(ROOT, '.bench-tmp', 'candidates');

export type CandidateFile = 'floor' | 'library' | 'xstate' | 'jsm';

/** Bundles the candidate files once per process tree; returns the directory. */
export async function buildCandidates(): Promise<string> {
  const entry = Object.fromEntries(
    (['floor', 'library', 'xstate', 'jsm'] as const).map((n) => [n, `bench/candidates/${n}.ts`]),
  );
  await bundle(entry, CANDIDATE_DIR, SELF_CONTAINED);
  return CANDIDATE_DIR;
}

/** Loads a private copy of a candidate's bundle, named after the row that uses it. */
export function loadCopy(file: CandidateFile, row: string): CandidateFactory {
  mkdirSync(path.join(CANDIDATE_DIR, 'copies'), { recursive: true });
  const copy = path.join(CANDIDATE_DIR, 'copies', `${row.replace(/[^a-z0-9]+/gi, '-')}.cjs`);
  copyFileSync(path.join(CANDIDATE_DIR, `${file}.cjs`), copy);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle built at run time, loaded synchronously
  return (require(copy) as { create: CandidateFactory }).create;
}

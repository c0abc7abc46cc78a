import * as fs from 'node:fs';
import * as path from 'node:path';

// The names a resume gives the attempts of a run it sets aside: `<file>.interrupted` the first,
// `<file>.interrupted.<n>` the n-th. Every writer and reader of a folder finds them here, from a
// listing of the folder, so that an attempt deleted by hand leaves a gap that hides none after it.

const ATTEMPT = /\.interrupted(?:\.(\d+))?$/;

/**
 * The run file (a name) whose attempt `name` is, `<file>.interrupted` or `<file>.interrupted.<n>`;
 * undefined when `name` is no attempt (`a.jsonl.interrupted.x.jsonl` is another task's run file,
 * and `a.jsonl.overwritten.interrupted` an attempt of `a.jsonl.overwritten`, not of `a.jsonl`).
 */
export function runFileOf(name: string): string | undefined {
  const m = ATTEMPT.exec(name);
  return m === null ? undefined : name.slice(0, m.index);
}

/** Which attempt a name is: 1 for `.interrupted`, n for `.interrupted.<n>`. */
function attemptNumber(name: string): number {
  const m = ATTEMPT.exec(name);
  return m === null ? Infinity : m[1] === undefined ? 1 : Number(m[1]);
}

/** Attempts in the order a resume made them: `.interrupted`, then `.interrupted.2`, …, `.interrupted.10`. */
export function byAttempt(a: string, b: string): number {
  return attemptNumber(a) - attemptNumber(b) || (a < b ? -1 : 1);
}

/**
 * Of a folder's names `listed`, the attempts of each run file, the oldest first, keyed by the run
 * file's name as `key` gives it (as the filesystem compares names, say).
 */
export function attemptsByRunFile(
  listed: readonly string[],
  key: (name: string) => string = (name) => name,
): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  for (const name of listed) {
    const of = runFileOf(name);
    if (of === undefined) continue;
    const file = key(of);
    const kept = byFile.get(file);
    if (kept === undefined) byFile.set(file, [name]);
    else kept.push(name);
  }
  for (const kept of byFile.values()) kept.sort(byAttempt);
  return byFile;
}

/** The attempts kept beside run file `file` (a path), the oldest first, as paths: one listing of its folder. */
export function attemptsBeside(file: string): string[] {
  return new FolderAttempts(path.dirname(file)).of(file);
}

/**
 * The path run file `file`'s next attempt is set aside as: numbered after the newest kept
 * (`kept`, the oldest first; its folder is listed when not given), so that the order of the
 * numbers stays the order the attempts were made, a gap left by a deleted one never filled.
 */
export function nextAttemptName(file: string, kept: readonly string[] = attemptsBeside(file)): string {
  const newest = kept.length === 0 ? 0 : attemptNumber(kept.at(-1)!);
  return newest === 0 ? `${file}.interrupted` : `${file}.interrupted.${newest + 1}`;
}

/**
 * The attempts kept in folder `dir`, by run file, from one listing made when first asked, and
 * kept up to date as `setAside` sets attempts aside: for a writer that holds the folder alone
 * (a resume asks for each cut-off run's attempts in turn; a listing each would cost a pass over
 * the folder per run).
 */
export class FolderAttempts {
  readonly #dir: string;
  #byFile: Map<string, string[]> | undefined;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The attempts of run file `file` (a path in the folder), the oldest first, as paths. */
  of(file: string): string[] {
    return (this.#listed().get(path.basename(file)) ?? []).map((n) => path.join(this.#dir, n));
  }

  /** Sets run file `file` aside as its next attempt, when it is there. */
  setAside(file: string): void {
    if (!fs.existsSync(file)) return;
    const next = nextAttemptName(file, this.of(file));
    fs.renameSync(file, next);
    const byFile = this.#listed();
    const base = path.basename(file);
    byFile.set(base, [...(byFile.get(base) ?? []), path.basename(next)]);
  }

  #listed(): Map<string, string[]> {
    if (this.#byFile === undefined) {
      let listed: string[] = [];
      try {
        listed = fs.readdirSync(this.#dir);
      } catch {
        // No folder: no attempts.
      }
      this.#byFile = attemptsByRunFile(listed);
    }
    return this.#byFile;
  }
}

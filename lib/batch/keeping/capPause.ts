import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RaiseRequest } from './raiseRequests';

/**
 * The file of a batch's history folder that says the batch is paused at its dollar cap
 * (`total.whenSpent: 'pause'`): written when the first run is refused at the cap, removed when
 * the cap is raised and when a batch starts or ends there. Its readers (`agent-sm inspect`,
 * `watch`) believe it only while a batch holds the folder.
 */
// Not `*.jsonl`: readers of the folder take those for runs.
export const PAUSE_FILE = 'batch.paused';

/** What the pause file says: when the batch paused, at what cap, and what was spent and held under it then. */
export interface CapPause {
  /** When the batch paused, epoch milliseconds. */
  readonly at: number;
  /** The cap in force when it paused. */
  readonly capUsd: number;
  /** USD spent (billed + uncertain) and held under the cap when the first run was refused, by the batch's own count. */
  readonly spentUsd: number;
  readonly heldUsd: number;
}

/** Writes the pause file of `dir` (whole, then renamed over: a reader never sees half of it). */
export function writeCapPause(dir: string, pause: CapPause): void {
  const file = path.join(dir, PAUSE_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(pause)}\n`);
  fs.renameSync(temporary, file);
}

/** Removes the pause file of `dir`, when there is one. */
export function clearCapPause(dir: string): void {
  fs.rmSync(path.join(dir, PAUSE_FILE), { force: true });
}

/**
 * The pause of the batch in `dir` still in force: its pause file, unless a raise above its cap
 * was asked since (the running batch takes it within a poll). Undefined when there is none, or
 * it cannot be read (a reader's guess is never worth an error).
 */
export function readCapPause(dir: string, raises: readonly RaiseRequest[]): CapPause | undefined {
  return pauseInForce(readPauseFile(dir), raises);
}

/** The pause file of `dir` as it is, when it holds a pause. */
export function readPauseFile(dir: string): CapPause | undefined {
  try {
    return asCapPause(JSON.parse(fs.readFileSync(path.join(dir, PAUSE_FILE), 'utf8')));
  } catch {
    return undefined;
  }
}

/** `value` as a pause (a reader's copy), when it is one. */
export function asCapPause(value: unknown): CapPause | undefined {
  const v = value as Partial<CapPause> | null;
  const figure = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  if (typeof v !== 'object' || v === null || !figure(v.at) || !figure(v.capUsd)) return undefined;
  if (!figure(v.spentUsd) || !figure(v.heldUsd)) return undefined;
  return { at: v.at, capUsd: v.capUsd, spentUsd: v.spentUsd, heldUsd: v.heldUsd };
}

/** `pause`, unless a raise above its cap was asked since. */
export function pauseInForce(pause: CapPause | undefined, raises: readonly RaiseRequest[]): CapPause | undefined {
  if (pause === undefined || raises.some((r) => r.maxCostUsd > pause.capUsd)) return undefined;
  return pause;
}

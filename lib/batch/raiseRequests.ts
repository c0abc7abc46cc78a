import * as fs from 'node:fs';
import * as path from 'node:path';
import { HistoryFileError } from '../history/HistoryFileError';
import { formatUsd } from '../internal/formatUsd';
import { messageOf } from '../internal/messageOf';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { readBatchManifest } from './batchManifest';

/**
 * The file of a batch's history folder that asks the batch to raise its paused cap, one JSON
 * line per raise (`{ "maxCostUsd": 0.5, "at": 1700000000000 }`), appended by
 * `agent-sm raise <folder> --total-usd N` (`requestRaise`) and read by the running batch, and
 * again by `resume`, so that a raise outlives the process it was meant for.
 */
// Not `*.jsonl`: readers of the folder take those for runs, and a task named `raise` would write `raise.jsonl`.
export const RAISE_FILE = 'batch.raises';

/** One line of the raise file. */
export interface RaiseRequest {
  maxCostUsd: number;
  /** When it was asked, epoch milliseconds. */
  at: number;
}

/**
 * The raise file's lines from `from` on (a line count), with the problem of each line that is
 * not a raise; a last line without its newline (being written) is left for the next read.
 */
export function readRaiseRequests(
  dir: string,
  from = 0,
): { requests: Array<RaiseRequest & { line: number }>; problems: string[]; lines: number } {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, RAISE_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { requests: [], problems: [], lines: from };
    throw error;
  }
  const whole = text.slice(0, text.lastIndexOf('\n') + 1);
  const lines = whole === '' ? [] : whole.slice(0, -1).split('\n');
  const requests: Array<RaiseRequest & { line: number }> = [];
  const problems: string[] = [];
  for (let i = from; i < lines.length; i++) {
    let value: unknown;
    try {
      value = JSON.parse(lines[i]!);
    } catch (error) {
      problems.push(`${RAISE_FILE} line ${i + 1} is not JSON (${messageOf(error)})`);
      continue;
    }
    const v = value as Partial<RaiseRequest> | null;
    if (
      typeof v !== 'object' ||
      v === null ||
      !(typeof v.maxCostUsd === 'number' && Number.isFinite(v.maxCostUsd) && v.maxCostUsd > 0) ||
      typeof v.at !== 'number'
    ) {
      problems.push(`${RAISE_FILE} line ${i + 1} is not { maxCostUsd, at }`);
      continue;
    }
    requests.push({ maxCostUsd: v.maxCostUsd, at: v.at, line: i + 1 });
  }
  return { requests, problems, lines: Math.max(from, lines.length) };
}

/**
 * Asks the batch of history folder `dir` to raise its total dollar cap to `maxCostUsd`: checks
 * that its manifest says `total.whenSpent: 'pause'` and that `maxCostUsd` is above the cap in
 * force (the manifest's, or the last raise asked), then appends the request, forced to the
 * disk. The running batch takes it within a poll; a batch resumed later starts from it.
 * Returns the cap it replaces.
 */
export async function requestRaise(dir: string, maxCostUsd: number, clock: () => number = Date.now): Promise<number> {
  if (!(typeof maxCostUsd === 'number' && Number.isFinite(maxCostUsd) && maxCostUsd > 0))
    throw new InvalidArgumentError('maxCostUsd', 'a positive finite number of USD', maxCostUsd);
  const manifest = await readBatchManifest(dir);
  if (manifest === undefined)
    throw new HistoryFileError(
      'read_failed',
      dir,
      'is not the history folder of a batch (it has no batch.json): give the folder runBatch wrote (its historyDir), or --redis URL --batch ID for a BullMQ batch',
    );
  const total = manifest.limits.total as { maxCostUsd?: number; whenSpent?: unknown } | undefined;
  if (total?.whenSpent !== 'pause' || total.maxCostUsd === undefined)
    throw new InvalidArgumentError(
      'folder',
      "the folder of a batch run with total: { maxCostUsd, whenSpent: 'pause' } (this one stops at its cap: resume it with a new total instead)",
      dir,
    );
  let now = total.maxCostUsd;
  for (const r of readRaiseRequests(dir).requests) now = Math.max(now, r.maxCostUsd);
  if (!(maxCostUsd > now))
    throw new InvalidArgumentError('--total-usd', `a cap above the one in force (${formatUsd(now)})`, maxCostUsd);
  const file = path.join(dir, RAISE_FILE);
  const fd = fs.openSync(file, 'a');
  try {
    fs.writeSync(fd, `${JSON.stringify({ maxCostUsd, at: clock() })}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return now;
}

import * as fs from 'node:fs';
import * as path from 'node:path';
import { messageOf } from '../../internal/messageOf';
import { freeName } from './freeName';

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

/** Raise requests read after a count of them: those found, the problem of each line that is not one, the count now. */
export interface RaisesRead {
  requests: Array<RaiseRequest & { line: number }>;
  problems: string[];
  lines: number;
}

/**
 * The raise file's lines from `from` on (a line count), with the problem of each line that is
 * not a raise; a last line without its newline (being written) is left for the next read.
 */
export function readRaiseRequests(dir: string, from = 0): RaisesRead {
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
    if (!isRaiseRequest(value)) {
      problems.push(`${RAISE_FILE} line ${i + 1} is not { maxCostUsd, at }`);
      continue;
    }
    requests.push({ maxCostUsd: value.maxCostUsd, at: value.at, line: i + 1 });
  }
  return { requests, problems, lines: Math.max(from, lines.length) };
}

/** Whether `value` is a raise request: a positive finite cap, and when it was asked. */
export function isRaiseRequest(value: unknown): value is RaiseRequest {
  const v = value as Partial<RaiseRequest> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.maxCostUsd === 'number' &&
    Number.isFinite(v.maxCostUsd) &&
    v.maxCostUsd > 0 &&
    typeof v.at === 'number' &&
    Number.isFinite(v.at)
  );
}

/** Appends `request` to the raise file of `dir`, forced to the disk. */
export function appendRaiseRequest(dir: string, request: RaiseRequest): void {
  const fd = fs.openSync(path.join(dir, RAISE_FILE), 'a');
  try {
    fs.writeSync(fd, `${JSON.stringify({ maxCostUsd: request.maxCostUsd, at: request.at })}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Sets the raise file of `dir` aside (kept, out of a new batch's way): its raises were asked of the batch before. */
export function setAsideRaises(dir: string): void {
  const file = path.join(dir, RAISE_FILE);
  if (fs.existsSync(file)) fs.renameSync(file, freeName(`${file}.overwritten`));
}

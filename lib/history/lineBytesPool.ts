import { LineBytes } from './LineBytes';

/**
 * Where a line is put together before its write, shared by every sink without group commit:
 * a line is written before the next is begun (writes are synchronous), and a buffer per sink
 * would cost a batch an allocation per run. Each use starts from its start.
 */
export const SCRATCH = new LineBytes(64 * 1024);
/** Past this, the scratch buffer is replaced after the line (one huge line must not keep its memory). */
export const SCRATCH_KEPT_BYTES = 1024 * 1024;
export const NEWLINE = Buffer.from('\n');

/**
 * Group commit's buffers of closed sinks, for the next sinks to take: a batch opens a sink per
 * run, and a buffer each would cost every run an allocation and the collector its memory.
 */
const SPARE: LineBytes[] = [];
const SPARE_KEPT = 64;

export function takeLineBytes(): LineBytes {
  return SPARE.pop() ?? new LineBytes(4096);
}

export function giveBackLineBytes(bytes: LineBytes): void {
  bytes.length = 0;
  if (SPARE.length < SPARE_KEPT && bytes.buf.length <= 64 * 1024) SPARE.push(bytes);
}

/** After a write from the scratch buffer: one huge line must not keep its memory. */
export function shrinkScratch(): void {
  if (SCRATCH.buf.length > SCRATCH_KEPT_BYTES) SCRATCH.buf = Buffer.allocUnsafeSlow(64 * 1024);
}

// A fixed piece of CPU work, timed when a bench run starts and when it ends, and printed with
// the machine's details. Ratios that set CPU work against an fsync (the mirrors with the
// ledger, runBatch with history) move with the machine's speed, which on a shared guest changes
// between runs: the AI SDK's loop alone took 219 µs a step in a full run and 126–132 µs in runs
// of its suite on the same machine hours later, and the ratio read 1.56–1.60× and then
// 1.41–1.42×. The probe tells a run on a slow machine from one on a fast one.
import { median } from './harness';

const ITEMS = 20_000;

/** One round of the work: JSON written and read back, then sorted. Returns a checksum, so that none of it is left out. */
function work(): number {
  const items = Array.from({ length: ITEMS }, (_, i) => ({
    id: i,
    name: `item-${(i * 7919) % ITEMS}`,
    score: (i * 31) % 997,
  }));
  const back = JSON.parse(JSON.stringify(items)) as typeof items;
  back.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return back[0]!.id + back[ITEMS - 1]!.id;
}

/** What the probe measured: the median ms of its rounds, the fastest and the slowest. */
export interface SpeedProbe {
  readonly ms: number;
  readonly low: number;
  readonly high: number;
  readonly rounds: number;
}

/** Times `rounds` rounds of the fixed work, after one untimed round. */
export function speedProbe(rounds = 7): SpeedProbe {
  if (!Number.isSafeInteger(rounds) || rounds < 1)
    throw new Error(`speedProbe(rounds): rounds is ${String(rounds)}; expected a whole number of at least 1`);
  let sum = work();
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    sum += work();
    times.push(performance.now() - start);
  }
  if (!Number.isFinite(sum)) throw new Error('speedProbe: the work gave no checksum');
  return { ms: median(times), low: Math.min(...times), high: Math.max(...times), rounds };
}

/** The run's line: the probe at its start, and at its end once there is one. */
export function speedLine(start: SpeedProbe, end?: SpeedProbe): string {
  const one = (p: SpeedProbe): string =>
    `${p.ms.toFixed(1)} ms (median of ${p.rounds}: ${p.low.toFixed(1)}–${p.high.toFixed(1)})`;
  const atEnd = end === undefined ? '' : `, ${one(end)} at the end`;
  return `speed:   a fixed CPU workload took ${one(start)} at the start${atEnd}; less is a faster machine`;
}

// A fixed piece of CPU work, timed when a bench run starts and when it ends, and printed with
// the machine's details. Ratios that set CPU work against an fsync (the mirrors with the
// ledger) seem to move with the machine's speed, which on a shared guest changes between runs
// (docs/benchmarks.md has the figures): the probe is there to tell a run on a slow machine from
// one on a fast one.
import { median } from './harness';

const ITEMS = 20_000;

/** One round of the work: JSON written and read back, then sorted. Returns a checksum: checked, so none of it is left out. */
function work(): number {
  const items = Array.from({ length: ITEMS }, (_, i) => ({
    id: i,
    name: `item-${(i * 7919) % ITEMS}`,
    score: (i * 31) % 997,
  }));
  const back = JSON.parse(JSON.stringify(items)) as typeof items;
  // `<` rather than localeCompare: the same work on every Node build, whatever its ICU.
  back.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
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
  const checksum = work();
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    const sum = work();
    times.push(performance.now() - start);
    if (sum !== checksum) throw new Error(`speedProbe: round ${r + 1} gave checksum ${sum}, the first ${checksum}`);
  }
  return { ms: median(times), low: Math.min(...times), high: Math.max(...times), rounds };
}

/** The run's line: the probe at its start, and at its end once there is one. */
export function speedLine(start: SpeedProbe, end?: SpeedProbe): string {
  const one = (p: SpeedProbe): string =>
    `${p.ms.toFixed(1)} ms (median of ${p.rounds}: ${p.low.toFixed(1)}–${p.high.toFixed(1)})`;
  const atEnd = end === undefined ? '' : `, ${one(end)} at the end`;
  return `speed:   a fixed CPU workload took ${one(start)} at the start${atEnd}; less is a faster machine`;
}

// Instructions per answer of each side of the `meter` bench, counted by valgrind's callgrind:
// deterministic where CPU time is not (two full runs of one commit read the metered stream at
// 1.05× and 1.15× of its floor). Each side runs bundled (bench/meterChild.ts, every dependency
// inlined) in two processes: `WARMUP` answers then none, and `WARMUP` then `extra`; the
// difference over `extra` is the figure, with JIT compilation mostly in the warm-up. The local
// server runs in the same process, as in the CPU-time rows, so its instructions are on both sides.
// Two runs of one commit read the stream at 1.08× and 1.04×, JSON at 1.05× and 1.03×: the counts
// at these sizes still carry some JIT work. With 4 warm-up and 6 counted streamed answers, two
// runs of one commit read the hand side's answer at 330.5 and 314.8 million instructions (1.07×,
// 1.12×, target 1.10×); the stream now warms up 6 and counts 12, to halve what JIT work is left
// in each answer's share.
import path from 'node:path';
import { bundle, SELF_CONTAINED } from './bundle';
import { countInstructions } from './callgrind';
import { ROOT, scaled } from './harness';
import type { MeterKind, MeterSide } from './meterSides';

const DIR = path.join(ROOT, '.bench-tmp', 'meter');
const CHILD = path.join(DIR, 'meterChild.cjs');

/** Answers made before counting, and counted, per kind: a streamed answer is ~30× a JSON one's work. */
export const METER_COUNTS: Record<MeterKind, { warmup: number; extra: number }> = scaled(
  { json: { warmup: 60, extra: 120 }, streamed: { warmup: 6, extra: 12 } },
  // --quick: a short check, with more JIT work left in the count.
  { json: { warmup: 20, extra: 40 }, streamed: { warmup: 1, extra: 2 } },
);

/** Bundles bench/meterChild.ts with every dependency into one CommonJS file. */
export function buildMeterChild(): Promise<void> {
  return bundle({ meterChild: 'bench/meterChild.ts' }, DIR, SELF_CONTAINED);
}

function collected(side: MeterSide, kind: MeterKind, warmup: number, extra: number): Promise<number> {
  return countInstructions(CHILD, [side, kind, String(warmup), String(extra)]);
}

/**
 * The hand side's and the metered side's instructions per `kind` answer (`buildMeterChild()`
 * first). Counts do not depend on what else runs, so two processes run at a time.
 */
export async function meterInstructions(kind: MeterKind): Promise<{ hand: number; metered: number }> {
  const { warmup, extra } = METER_COUNTS[kind];
  const perAnswer = async (side: MeterSide): Promise<number> => {
    const [base, more] = [await collected(side, kind, warmup, 0), await collected(side, kind, warmup, extra)];
    return (more - base) / extra;
  };
  const [hand, metered] = await Promise.all([perAnswer('hand'), perAnswer('metered')]);
  return { hand, metered };
}

async function main(): Promise<void> {
  await buildMeterChild();
  for (const kind of ['json', 'streamed'] as const) {
    const { hand, metered } = await meterInstructions(kind);
    console.log(
      `${kind.padEnd(9)} hand ${hand.toFixed(0)}  metered ${metered.toFixed(0)}  ${(metered / hand).toFixed(3)}×`,
    );
  }
}

if (require.main === module)
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });

// Instructions per adapter turn and per mirror step of the turncore suite, counted by callgrind:
// the suite asks for them when CPU time cannot decide a target (its pairs' quartiles straddle
// it: two runs of one commit read the mirror step at 1.02× and 1.06× of the round start). Each
// core runs in bench/turnCoreChild.ts (bundled, its dependencies left to node_modules as the
// cores' are) in two processes, each warmed up as long as the CPU-time samples are (uncounted:
// callgrind's instrumentation is switched on after it), then counting 0 or `extra` units; the
// difference over `extra` is the figure. A warm-up counted in full, as the meter's is, left the
// JIT's work in the mirror's count: 200 runs read 1.00× and 1.05× in two sizes of one commit.
import path from 'node:path';
import { STEPS_PER_RUN } from './aiSdkMock';
import { bundle } from './bundle';
import { countInstructions } from './callgrind';
import { ROOT, scaled } from './harness';
import type { TurnCoreKey } from './turnCoreSides';

const DIR = path.join(ROOT, '.bench-tmp', 'turn-core-child');
const CHILD = path.join(DIR, 'turnCoreChild.cjs');

/**
 * Units made before counting, and counted: an adapter turn, or a mirrored run of STEPS_PER_RUN
 * steps. `--quick` counts fewer, never warms up less: after 800 runs the JIT is still at work,
 * and the count doubled.
 */
const WARMUP = 3000;
const COUNTS: Record<TurnCoreKey, { warmup: number; extra: number }> = scaled(
  // An adapter turn allocates little: 2,000 counted turns caught a major collection or not (0.81×,
  // 0.89× and 1.24× in three counts of one commit); 40,000 hold several.
  { adapter: { warmup: WARMUP, extra: 40_000 }, mirror: { warmup: WARMUP, extra: 200 } },
  { adapter: { warmup: WARMUP, extra: 10_000 }, mirror: { warmup: WARMUP, extra: 100 } },
);

/** Bundles bench/turnCoreChild.ts, its dependencies external, so that it and the cores share one `ai`. */
export function buildTurnCoreChild(): Promise<void> {
  return bundle({ turnCoreChild: 'bench/turnCoreChild.ts' }, DIR, {
    config: false,
    platform: 'node',
    target: 'node20',
    outExtension: () => ({ js: '.cjs' }),
    skipNodeModulesBundle: true,
  });
}

/** Instructions per adapter turn or per mirror step, of the round start's core and of today's. */
export async function turnCoreInstructions(
  key: TurnCoreKey,
  cores: { old: string; now: string },
): Promise<{ old: number; now: number }> {
  const { warmup, extra } = COUNTS[key];
  const per = key === 'mirror' ? STEPS_PER_RUN : 1;
  const perUnit = async (core: string): Promise<number> => {
    const base = await countInstructions(CHILD, [core, key, String(warmup), '0'], { fromSignal: true });
    const more = await countInstructions(CHILD, [core, key, String(warmup), String(extra)], { fromSignal: true });
    return (more - base) / (extra * per);
  };
  const [old, now] = await Promise.all([perUnit(cores.old), perUnit(cores.now)]);
  return { old, now };
}

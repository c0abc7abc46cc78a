// How a ratio target is decided when CPU time alone may not settle it: CPU time decides when the
// pairs' quartiles are clear of the target; otherwise callgrind's instruction count does, which
// gives the same figure run after run. The meter, turncore and durable (continue) suites use it.
//
// The quartiles, not the median's 90% interval that settles other ratio targets (harness.ts
// `ratioTarget`): that interval is about sampling within one run, and these targets moved
// between runs by more (the mirror step 1.02× and 1.06×, the metered stream 1.05× and 1.15×); with
// several hundred pairs it is far narrower than the quartiles, and CPU time would decide again.
import { valgrindMissing } from './callgrind';
import { formatRatio, formatRatioFigure, type RatioFigure, type TargetCheck } from './harness';

/** Whether the pairs' quartiles are clear of `limit`, so that CPU time can decide it. */
function quartilesClearOf(f: RatioFigure, limit: number): boolean {
  return f.p75 <= limit || f.p25 > limit;
}

/**
 * The check of target `name` (≤ `limit`, `goal` saying of what): by CPU time when it is clear of
 * the limit, else by `count` (the instruction ratio, and what it counted). A count that cannot
 * be made is a MISS that says why, never a lost verdict.
 */
export async function cpuOrInstructions(
  target: { name: string; goal: string; limit: number },
  cpu: RatioFigure,
  count: () => Promise<{ ratio: number; detail: string }>,
): Promise<TargetCheck> {
  const { name, limit } = target;
  const goal = `≤ ${formatRatio(limit)} ${target.goal}`;
  const measured = `CPU ${formatRatioFigure(cpu)}`;
  if (quartilesClearOf(cpu, limit))
    return { name, goal, measured: `${measured}, decided by CPU time`, pass: cpu.median <= limit };
  const missing = valgrindMissing();
  if (missing !== undefined)
    return { name, goal, measured: `${measured}: within noise of the target, and ${missing}`, pass: false };
  try {
    const { ratio, detail } = await count();
    return {
      name,
      goal,
      measured: `${formatRatio(ratio)} ${detail}, decided by callgrind; ${measured}`,
      pass: ratio <= limit,
    };
  } catch (error) {
    return {
      name,
      goal,
      measured: `${measured}: within noise of the target, and callgrind's count failed (${(error as Error).message.slice(0, 300)})`,
      pass: false,
    };
  }
}

/** `make` run once, on first call: a child bundled only when a count needs it. */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

// How a ratio target is decided when CPU time alone may not settle it: CPU time decides when the
// interval that holds the pairs' median (90%, bench/medianInterval.ts) is clear of the target;
// otherwise callgrind's instruction count does, which gives the same figure run after run. The
// meter and turncore suites use it.
import { valgrindMissing } from './callgrind';
import { clearOf, formatRatio, formatRatioFigure, type RatioFigure, type TargetCheck } from './harness';

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
  if (clearOf(cpu, limit))
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

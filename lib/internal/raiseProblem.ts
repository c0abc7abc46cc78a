import { formatUsd } from './formatUsd';

/** What is wrong with a raise's argument, as `InvalidArgumentError` takes it. */
export interface RaiseProblem {
  name: string;
  expected: string;
  value: unknown;
}

/**
 * Checks the argument of a batch's `raise(limits)`: an object with `maxCostUsd` alone, a finite
 * number of USD above `capInForceUsd` when the caller knows that cap (a BullMQ batch's is in
 * Redis, checked there), else above 0. Both kinds of batch share it so that they word a refusal
 * the same way; the caller throws, so each bundle throws its own `InvalidArgumentError`.
 */
export function raiseProblem(limits: unknown, capInForceUsd?: number): RaiseProblem | undefined {
  if (typeof limits !== 'object' || limits === null)
    return { name: 'raise(limits)', expected: 'an object { maxCostUsd }', value: limits };
  for (const key of Object.keys(limits))
    if (key !== 'maxCostUsd')
      return {
        name: `raise(limits).${key}`,
        expected: 'left out: only maxCostUsd can be raised',
        value: (limits as Record<string, unknown>)[key],
      };
  const { maxCostUsd } = limits as { maxCostUsd?: unknown };
  const floor = capInForceUsd ?? 0;
  if (typeof maxCostUsd === 'number' && Number.isFinite(maxCostUsd) && maxCostUsd > floor) return undefined;
  return {
    name: 'raise(limits).maxCostUsd',
    expected:
      capInForceUsd === undefined
        ? 'a positive finite number of USD'
        : `a finite number of USD above the cap in force (${formatUsd(capInForceUsd)})`,
    value: maxCostUsd,
  };
}

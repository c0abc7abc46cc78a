import type { BoundExceeded } from '../boundExceeded';
import type { ResponseNotes } from '../turn/LLMOutcome';
import { ContractViolationError, type OperationError } from '../TurnError';
import type { UsageMeter } from '../money/UsageMeter';
import type { ChargedResponse } from './chargeResponse';

/** What an answered attempt's charge is decided on: the charge, and what the driver knows of its run. */
export interface ChargedFacts {
  charged: Pick<ChargedResponse, 'passed' | 'problems' | 'priced' | 'valid'>;
  operation: string;
  /** The response as it came, for the contract error's value. */
  value: unknown;
  /** What breaks the response's contract: the adapter checks its loop's; a framework's response is the framework's. */
  problem: string | undefined;
  /** A strict cap: a response past its bound stops the run and every budget it shares. */
  tripsOnBound: boolean;
  /** A cap measures usage (dollars or tokens): a bad number there would leave it blind. Read only when the usage has problems. */
  capsUsage: boolean;
  /** The run warned of an unknown cost before: once a run. */
  warnedUnknownCost: boolean;
}

/** What follows an answered attempt's charge, the same for both drivers; each makes its own moves from it. */
export type AfterCharge =
  /** Past its bound under a strict cap: the meter trips, and the run stops over budget. */
  | { kind: 'trip'; passed: BoundExceeded }
  /** The run ends in Error: a broken contract, bad usage where a cap measures it, or a price that failed. */
  | { kind: 'failed'; error: ContractViolationError | OperationError; data: Record<string, unknown> }
  /** The response goes on, with its notes, and the unknown-cost warning to log when it is the run's first. */
  | { kind: 'response'; notes: ResponseNotes | undefined; warn: string | undefined };

/**
 * The decision after an answered attempt is charged and journaled (issue 50, item 5: one
 * transition, pure): a bound passed under a strict cap first, then the contract, then usage a cap
 * cannot measure, then a price that failed; else the response, with what its record notes.
 */
export function afterCharge(facts: ChargedFacts): AfterCharge {
  const { charged, operation, problem } = facts;
  const { passed, problems, priced } = charged;
  if (passed !== undefined && facts.tripsOnBound) return { kind: 'trip', passed };
  if (problem !== undefined)
    return {
      kind: 'failed',
      error: new ContractViolationError(operation, problem, facts.value),
      data: { operation, problem },
    };
  if (problems.length > 0 && facts.capsUsage)
    return {
      kind: 'failed',
      error: new ContractViolationError(operation, `reported bad usage: ${problems.join('; ')}`, usageOf(facts.value)),
      data: { operation, usageProblems: problems },
    };
  // The response's own usage, apart from the run's total that the record ending the turn carries as `usage`.
  if (priced.error !== undefined)
    return { kind: 'failed', error: priced.error, data: { operation, responseUsage: charged.valid } };
  // The usual answer, with nothing to note: one decision for all (bench: turncore).
  if (problems.length === 0 && priced.note === undefined) return GO_ON;
  let notes: ResponseNotes | undefined;
  if (problems.length > 0) notes = { usageProblems: problems };
  if (priced.note !== undefined) (notes ??= {}).unknownCost = priced.note;
  const warn = priced.note !== undefined && !facts.warnedUnknownCost ? priced.note : undefined;
  return { kind: 'response', notes, warn };
}

const GO_ON: AfterCharge = Object.freeze({ kind: 'response', notes: undefined, warn: undefined });

/** The usage a response reported, as it reported it. */
function usageOf(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? (value as { usage?: unknown }).usage : undefined;
}

/**
 * `afterCharge` with what it is decided on read from the run's `meter`: whether a strict cap
 * stops on a bound passed, and, only when the usage has problems, whether a cap measures usage.
 */
export function afterChargeOn(
  meter: Pick<UsageMeter, 'tripsOnBound' | 'caps'>,
  charged: ChargedFacts['charged'],
  operation: string,
  value: unknown,
  problem: string | undefined,
  warnedUnknownCost: boolean,
): AfterCharge {
  return afterCharge({
    charged,
    operation,
    value,
    problem,
    tripsOnBound: meter.tripsOnBound,
    capsUsage: charged.problems.length > 0 && (meter.caps('maxCostUsd') || meter.caps('maxTokens')),
    warnedUnknownCost,
  });
}

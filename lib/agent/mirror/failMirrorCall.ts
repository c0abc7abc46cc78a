import { afterFailure, type NextTry } from '../calls/afterFailure';
import { answeredUsageOf, chargeFailure } from '../calls/chargeFailure';
import type { MirrorMoves } from './MirrorMoves';

/**
 * A model attempt of the running run failed (`StepMirror.modelCallFailed`): charged by the rule
 * and journaled, by the decision the adapter makes too (`afterFailure`); `willRetry: false` (or a
 * stream cut at its bound) ends the run in Error, else it waits for a retry or the run's end.
 * `delayMs` is kept in the attempt's record.
 */
export function failMirrorCall(
  run: MirrorMoves,
  error: unknown,
  info: { willRetry?: boolean; delayMs?: number },
): void {
  // A refused answer that reports its usage is billed at it, as on the adapter; else by the charge rule.
  const { charge, usage } =
    answeredUsageOf(error) === undefined
      ? { charge: run.endAttempt({ kind: 'failed', error }), usage: undefined }
      : chargeFailure(run.takeHold('the bound given to modelCallStart'), error);
  const ended = afterFailure(run.attempt, error, charge, () => frameworkSaid(info), usage);
  run.attemptLine(run.deps.clock(), ended.line);
  run.failures.push(ended.failure);
  if (ended.ends) run.endCallFailed(error);
}

/** What the framework said of a retry, as a plan: no retry, one after `delayMs`, or one it may make. */
function frameworkSaid(info: { willRetry?: boolean; delayMs?: number }): NextTry {
  if (info.willRetry === false) return { kind: 'stop' };
  return info.delayMs === undefined ? { kind: 'maybe' } : { kind: 'wait', ms: info.delayMs };
}

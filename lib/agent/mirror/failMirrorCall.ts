import { afterFailure, type NextTry } from '../calls/afterFailure';
import { chargeFailure } from '../calls/chargeFailure';
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
  // By the charge rule, as on the adapter; a refused answer that reports its usage is billed at it.
  const answered = chargeFailure(run.takeHold(), error);
  const ended = afterFailure(run.attempt, error, answered.charge, () => frameworkSaid(info), answered);
  run.attemptLine(run.deps.clock(), ended.line);
  run.failures.push(ended.failure);
  // A refused answer past its bound: under a strict cap the run stops, as the adapter's does.
  if (answered.passed !== undefined && run.meter!.tripsOnBound) return run.trip(answered.passed);
  if (ended.ends) run.endCallFailed(error);
}

/** What the framework said of a retry, as a plan: no retry, one after `delayMs`, or one it may make. */
function frameworkSaid(info: { willRetry?: boolean; delayMs?: number }): NextTry {
  if (info.willRetry === false) return { kind: 'stop' };
  return info.delayMs === undefined ? { kind: 'maybe' } : { kind: 'wait', ms: info.delayMs };
}

import { failureMessage } from '../../internal/failureMessage';
import { cutAtBoundOf } from '../money/cutAtBound';
import { chargeFields } from '../calls/endAttempt';
import { journalError } from '../journal/JournalEntry';
import type { MirrorMoves } from './MirrorMoves';

/**
 * A model attempt of the running run failed (`StepMirror.modelCallFailed`): charged by the rule
 * and journaled; `willRetry: false` (or a stream cut at its bound) ends the run in Error, else
 * it waits for a retry or the run's end. `delayMs` is kept in the attempt's record.
 */
export function failMirrorCall(
  run: MirrorMoves,
  error: unknown,
  info: { willRetry?: boolean; delayMs?: number },
): void {
  const charge = run.endAttempt({ kind: 'failed', error });
  // A stream cut at its bound: the server does not stop at max tokens, so the call is not tried again.
  const cut = cutAtBoundOf(error);
  run.attemptLine(run.deps.clock(), {
    error: journalError(error),
    ...chargeFields(charge),
    ...(cut && { cutAtBound: cut }),
  });
  run.failures.push({
    attempt: run.attempt,
    error: failureMessage(error),
    ...(cut && { noRetry: 'the response stream was cut at its bound' }),
    ...(cut === undefined && info.willRetry !== false && info.delayMs !== undefined && { delayMs: info.delayMs }),
  });
  if (info.willRetry === false || cut !== undefined) run.endCallFailed(error);
}

import { messageOf } from '../../internal/messageOf';
import { Deadline } from '../money/Deadline';

/** Why a run's signal aborted, in words: a passed deadline's limit, the caller's abort, or the reason given. */
export function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Deadline) return reason.spent.message;
  if (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'AbortError')
    return "aborted by the caller's signal";
  return reason === undefined ? 'cancelled' : messageOf(reason);
}

import { InvalidArgumentError, type BatchPause } from 'agent-state-machine';
import { messageOf } from '../../internal/messageOf';

/** The budget fields a follower of a batch reads to tell that it paused: the pause's raise count, the cap, spent and held dollars. */
export interface PauseFields {
  pausedAt: string | null;
  capUsd: string | null;
  spentUsd: number;
  heldUsd: string | null;
}

/**
 * Calls `onPause` once per pause of a BullMQ batch at its cap, as `runBatch` calls its own: when
 * the budget says a call was refused under the cap in force (its `pz`, the raise count then)
 * and `onPause` was not told of that pause yet, with the batch's figures read from Redis and
 * `raise`. A throw or a rejection of `onPause` goes to `onProblem`; the batch stays paused.
 */
export function pauseNotice(
  onPause: ((pause: BatchPause) => void | Promise<void>) | undefined,
  raise: (limits: { maxCostUsd: number }) => Promise<unknown>,
  onProblem: (message: string) => void,
): (fields: PauseFields) => void {
  let toldAt: string | undefined;
  return ({ pausedAt, capUsd, spentUsd, heldUsd }) => {
    if (onPause === undefined || pausedAt === null || pausedAt === toldAt || capUsd === null) return;
    toldAt = pausedAt;
    const pause: BatchPause = {
      capUsd: Number(capUsd),
      spentUsd,
      heldUsd: Number(heldUsd ?? 0),
      // BatchPause's raise returns nothing; a raise that fails is said, not dropped.
      raise: (limits) =>
        void raise(limits).catch((error: unknown) => onProblem(`onPause's raise failed: ${messageOf(error)}`)),
    };
    try {
      const returned: unknown = onPause(pause);
      if (returned instanceof Promise)
        returned.catch((error: unknown) => onProblem(`onPause failed: ${messageOf(error)}; the batch stays paused`));
    } catch (error) {
      onProblem(`onPause threw: ${messageOf(error)}; the batch stays paused`);
    }
  };
}

/** `submitBatch`'s `onPause`: a function, given only beside `total.whenSpent: 'pause'` (it would never be called otherwise). */
export function assertOnPause(onPause: unknown, total: { whenSpent?: unknown } | undefined): void {
  if (onPause === undefined) return;
  if (typeof onPause !== 'function')
    throw new InvalidArgumentError('onPause', 'a function ({ capUsd, spentUsd, heldUsd, raise }) => void', onPause);
  if (total?.whenSpent !== 'pause')
    throw new InvalidArgumentError(
      'onPause',
      "left out unless `total.whenSpent` is 'pause': a batch that stops at its cap never pauses",
      onPause,
    );
}

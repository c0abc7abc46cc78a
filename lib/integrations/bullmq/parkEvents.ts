import type { Redis } from 'ioredis';
import { messageOf } from '../../internal/messageOf';
import type { BatchKeys } from './batchKeys';

/** A run of the batch parked at its paused cap (`p: 1`) or back in a slot after a raise (`p: 0`), on the batch's events. */
export interface ParkEvent {
  t: 'p';
  i: number;
  p: 0 | 1;
}

/**
 * Tells the batch's followers (the producer's progress, `attachBatch`) that run `index` parked at
 * the paused cap or took a slot again, so that a parked run is not counted in flight. RPUSHX: the
 * events list is there once the run started; a batch gone from Redis is not recreated by it. A
 * failure costs only the progress figures: it is said, and the run goes on.
 */
export function pushParkEvent(
  redis: Redis,
  keys: BatchKeys,
  index: number,
  parked: boolean,
  onError: (error: Error) => void,
): void {
  const event: ParkEvent = { t: 'p', i: index, p: parked ? 1 : 0 };
  redis
    .rpushx(keys.events, JSON.stringify(event))
    .catch((error: unknown) =>
      onError(
        new Error(
          `run ${index}: the batch's progress did not hear that it ${parked ? 'parked' : 'went on'}: ${messageOf(error)}`,
        ),
      ),
    );
}

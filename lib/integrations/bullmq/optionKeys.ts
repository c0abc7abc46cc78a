// The names each entry point of the distributed batch takes, checked against its options type by
// assertKnownOptions so that they cannot drift, and the options elsewhere that it refuses, with
// why: each read from the one declaration of every option (internal/optionTable.ts).
import { keysOn, refusedOn } from '../../internal/optionTable';

export const WORKER_OPTION_KEYS = keysOn('worker');

export const SUBMIT_OPTION_KEYS = keysOn('submit');

export const ATTACH_OPTION_KEYS = keysOn('attach');

/** runBatch() options a distributed batch's producer does not take, with why and where they go instead. */
export const SUBMIT_CANNOT = refusedOn('submit');

/** runBatch() and adapter options a worker does not take, with why. */
export const WORKER_CANNOT = refusedOn('worker');

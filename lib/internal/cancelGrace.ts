/**
 * After a cancellation or an abort, how long a run's running operation (an LLM call, a tool, an
 * agent factory) may take to stop before it is abandoned, when `cancelGraceMs` is not given:
 * one value for the adapter, runBatch and the BullMQ producer.
 */
export const CANCEL_GRACE_MS = 2000;

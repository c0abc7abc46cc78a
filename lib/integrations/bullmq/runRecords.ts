import type { Redis } from 'ioredis';
import {
  emptyUsage,
  RunSkippedError,
  type BudgetLimits,
  type RetryOptions,
  type SkipReason,
} from 'agent-state-machine';
import type { BatchKeys } from './batchKeys';
import { USAGE_CODES, usageFromStrings } from './budgetFields';
import type { PriceTable } from './PriceTable';
import { runScript } from './redisScripts';
import { errorToWire, type WireRunReport } from './wireReport';
import { WorkerLostError } from './WorkerLostError';

/** The settings a batch's workers read from Redis. */
export interface BatchMeta {
  v: 1;
  count: number;
  perRun?: BudgetLimits;
  total?: BudgetLimits;
  retry?: RetryOptions;
  pricing?: PriceTable;
  retryLostRuns: number;
  cancelGraceMs: number;
}

/** Writes a run's report once; true when it is the one that counts. */
export async function record(redis: Redis, keys: BatchKeys, index: number, report: WireRunReport): Promise<boolean> {
  const json = JSON.stringify(report);
  const event = `{"t":"f","i":${index},"r":${json}}`;
  return (await runScript(redis, 'asmRecord', [keys.results, keys.events], [index, json, event])) === 1;
}

export function skippedReport(id: string, reason: SkipReason, message: string, worker?: string): WireRunReport {
  return {
    id,
    outcome: 'skipped',
    usage: emptyUsage(),
    durationMs: 0,
    transitions: 0,
    error: errorToWire(new RunSkippedError(reason, message)),
    ...(worker === undefined ? {} : { worker }),
  };
}

/** A run started (by `start.w`, `start.a` times) and never reported: `error`, with what it had charged. */
export async function lostReport(
  redis: Redis,
  keys: BatchKeys,
  index: number,
  id: string,
  start: { w: string; a: number },
): Promise<WireRunReport> {
  // Per run, Redis keeps the counters only: the wall-time slot (`<index>:st`) is never written and reads 0.
  const usage = usageFromStrings(await redis.hmget(keys.runUsage, ...USAGE_CODES.map((code) => `${index}:${code}`)));
  return {
    id,
    outcome: 'error',
    usage,
    durationMs: 0,
    transitions: 0,
    error: errorToWire(new WorkerLostError(start.w, start.a)),
    worker: start.w,
    attempt: start.a,
  };
}

export function abortMessage(reason: unknown): string {
  if (
    reason === undefined ||
    (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'AbortError')
  )
    return 'batch aborted';
  return `batch aborted: ${reason instanceof Error ? reason.message : String(reason)}`;
}

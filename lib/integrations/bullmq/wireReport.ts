import {
  RunSkippedError,
  type ApprovalWait,
  type CapWait,
  type RunReport,
  type SkipReason,
  type UsageTotals,
} from 'agent-state-machine';
import { WorkerLostError } from './WorkerLostError';

/** A run's report as it travels through Redis: errors as name and message. */
export interface WireRunReport {
  id: string;
  outcome: RunReport['outcome'];
  usage: UsageTotals;
  durationMs: number;
  transitions: number;
  historyFile?: string;
  error?: WireError;
  historyError?: WireError;
  /** Parked at the batch's paused cap: how often, how long. */
  capWait?: CapWait;
  /** Parked for approval: how often, for how many calls, how long. */
  approval?: ApprovalWait;
  /**
   * Why part of its money is uncertain (`usage.uncertainUsd`), most calls first, as its records
   * say (with a history folder or a store); a run taken over says so too (takeoverCredit.ts).
   */
  uncertain?: ReadonlyArray<{ readonly why: string; readonly calls: number }>;
  /** Why some of its LLM calls are of unknown cost (`usage.unpricedCalls`), most calls first, as its records say. */
  unpriced?: ReadonlyArray<{ readonly why: string; readonly calls: number }>;
  /** Run again after its worker was lost: recovered from its journal in the store, restarted, or found ended there. */
  resumed?: RunReport['resumed'];
  /** Recovered from its journal: what was served, run again (`resumeTools`) or answered as interrupted, as runBatch reports it. */
  resume?: RunReport['resume'];
  worker?: string;
  attempt?: number;
}

interface WireError {
  name: string;
  message: string;
  /** RunSkippedError: why. */
  reason?: SkipReason;
  /** WorkerLostError: how many starts. */
  attempts?: number;
  /** WorkerLostError: which worker. */
  worker?: string;
}

export function errorToWire(error: Error): WireError {
  const wire: WireError = { name: error.name, message: error.message };
  if (error instanceof RunSkippedError) wire.reason = error.reason;
  if (error instanceof WorkerLostError) Object.assign(wire, { attempts: error.attempts, worker: error.worker });
  return wire;
}

/**
 * The error back as an Error: a RunSkippedError or WorkerLostError as itself, any other (a
 * TurnError, an agent factory's failure) as an Error with the original name and message — its
 * class and stack stay on the worker, whose history file and log have the detail.
 */
export function errorFromWire(wire: WireError): Error {
  if (wire.name === 'RunSkippedError' && wire.reason !== undefined)
    return new RunSkippedError(wire.reason, wire.message);
  if (wire.name === 'WorkerLostError' && wire.worker !== undefined)
    return new WorkerLostError(wire.worker, wire.attempts ?? 1);
  const error = new Error(wire.message);
  error.name = wire.name;
  return error;
}

/**
 * A report's resume as this version names it: a worker before the rename said `'continued'`
 * for a run recovered from its journal, and its reports stay in the batch's events in Redis.
 */
export function resumeFromWire(wire: WireRunReport): Pick<WireRunReport, 'resumed' | 'resume'> {
  const old = (mode: unknown): boolean => mode === 'continued';
  const { resumed, resume } = wire;
  return {
    ...(resumed === undefined ? {} : { resumed: old(resumed) ? 'recovered' : resumed }),
    ...(resume === undefined ? {} : { resume: old(resume.mode) ? { ...resume, mode: 'recovered' } : resume }),
  };
}

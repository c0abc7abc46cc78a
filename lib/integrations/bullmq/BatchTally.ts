import { addUsage, emptyUsage } from 'agent-state-machine/internal';
import type { BatchProgress, BudgetLimits, CapRaise, RunOutcome, SkipReason, UsageTotals } from 'agent-state-machine';
import type { StrictLimits } from './budgetFields';
import type { DistributedBatchReport, DistributedRunReport } from './BatchHandle';
import { errorFromWire, resumeFromWire, type WireRunReport } from './wireReport';
import type { ParkEvent } from './parkEvents';
import type { ApprovalEvent } from './approvalRecords';
import type { OpenRequest } from './approvalNotice';
import { reportWithCredit, type RunMoneyInRedis } from './takeoverCredit';

/** What the workers (and the handles) of a batch push to its event list in Redis. */
export type BatchEvent =
  | ParkEvent
  | ApprovalEvent
  | { t: 's'; i: number; w: string; a: number; c: number }
  | { t: 'f'; i: number; r: WireRunReport }
  | { t: 'r'; at: number; f: number; to: number; by: CapRaise['by'] };

/**
 * What a handle knows of its batch from the events read so far: each run's report, the runs
 * running, parked and asking approval, the workers, the raises, the usage; and the progress it
 * last told `onProgress`.
 */
export class BatchTally {
  /** The usage of the whole batch, as last read from its budget. */
  usage: UsageTotals = emptyUsage();
  readonly #ids: readonly string[];
  readonly #onProgress: ((progress: BatchProgress) => void) | undefined;
  readonly #runs: Array<DistributedRunReport | undefined>;
  readonly #outcomes: Record<RunOutcome, number> = {
    end_of_turn: 0,
    wrapped_up: 0,
    budget_exceeded: 0,
    stalled: 0,
    error: 0,
    cancelled: 0,
    skipped: 0,
  };
  readonly #running = new Set<number>();
  /** Runs parked at the paused cap: started, not ended, holding no slot (not in flight). */
  readonly #parked = new Set<number>();
  /** The open approval request of each run parked for approval. */
  readonly #asking = new Map<number, OpenRequest>();
  /** Requests read in this round of events: `onApproval` hears of those still open once the round is applied. */
  #fresh: OpenRequest[] = [];
  readonly #workers: Record<string, { concurrency: number; runs: number }> = {};
  readonly #raises: CapRaise[] = [];
  #last: BatchProgress;

  constructor(ids: readonly string[], onProgress: ((progress: BatchProgress) => void) | undefined) {
    this.#ids = ids;
    this.#onProgress = onProgress;
    this.#runs = new Array(ids.length);
    this.#last = this.#snapshot({ type: 'skipped', count: 0, reason: 'aborted', message: 'not started yet' });
  }

  /** Runs reported: one outcome each. */
  get done(): number {
    let done = 0;
    for (const count of Object.values(this.#outcomes)) done += count;
    return done;
  }

  /** The progress last told (`handle.progress()`). */
  get progress(): BatchProgress {
    return this.#last;
  }

  /** The runs neither reported nor started: those a stop skips. */
  notStarted(): number[] {
    const rest: number[] = [];
    for (let i = 0; i < this.#ids.length; i++)
      if (this.#runs[i] === undefined && !this.#running.has(i) && !this.#parked.has(i)) rest.push(i);
    return rest;
  }

  /** The requests read since the last call that are still open (one answered and gone on within the round is not). */
  takeFresh(): OpenRequest[] {
    const asked = this.#fresh;
    this.#fresh = [];
    return asked.filter((open) => this.#asking.get(open.index) === open);
  }

  apply(event: BatchEvent): void {
    if (event.t === 'r') {
      this.#raises.push({ at: event.at, fromUsd: event.f, toUsd: event.to, by: event.by });
      return;
    }
    if (event.t === 'a') {
      if (this.#runs[event.i] !== undefined) return;
      this.#running.delete(event.i);
      this.#parked.add(event.i);
      const open: OpenRequest = { index: event.i, id: this.#ids[event.i]!, requestId: event.r, calls: event.c };
      this.#asking.set(event.i, open);
      this.#fresh.push(open);
      this.#emit({ type: 'parked', index: event.i, id: open.id, calls: open.calls.length });
      return;
    }
    if (event.t === 'p') {
      const [from, to] = event.p === 1 ? [this.#running, this.#parked] : [this.#parked, this.#running];
      if (this.#runs[event.i] !== undefined || !from.has(event.i)) return;
      from.delete(event.i);
      to.add(event.i);
      const id = this.#ids[event.i]!;
      const asked = this.#asking.get(event.i);
      this.#asking.delete(event.i);
      if (asked !== undefined) this.#emit({ type: 'unparked', index: event.i, id, calls: asked.calls.length });
      else this.#emit({ type: event.p === 1 ? 'parked' : 'unparked', index: event.i, id, calls: 0, atCap: true });
      return;
    }
    if (event.t === 's') {
      if (this.#runs[event.i] !== undefined) return;
      this.#running.add(event.i);
      this.#workers[event.w] ??= { concurrency: event.c, runs: 0 };
      this.#emit({ type: 'started', index: event.i, id: this.#ids[event.i]! });
      return;
    }
    if (this.#runs[event.i] !== undefined) return;
    this.#finished(event.i, fromWire(event.r));
  }

  /**
   * The runs reported whose money Redis may have counted beyond their reports: taken over (an
   * attempt after the first) or written off (reported lost), whose earlier attempt may live on
   * and charge after the report was written (takeoverCredit.ts). Their indexes, and the attempt
   * each is reported by (for a run reported lost, the one after its last).
   */
  takenOver(): Array<{ index: number; attempt: number; how: 'taken over' | 'written off' }> {
    const runs: Array<{ index: number; attempt: number; how: 'taken over' | 'written off' }> = [];
    this.#runs.forEach((run, index) => {
      if (run === undefined) return;
      if (run.error?.name === 'WorkerLostError')
        runs.push({ index, attempt: (run.attempt ?? 1) + 1, how: 'written off' });
      else if ((run.attempt ?? 1) > 1) runs.push({ index, attempt: run.attempt!, how: 'taken over' });
    });
    return runs;
  }

  /** Run `index`'s report with its dollars as Redis counts them now (`reportWithCredit`). */
  restate(index: number, money: RunMoneyInRedis, attempt: number, how: 'taken over' | 'written off'): void {
    const run = this.#runs[index];
    if (run !== undefined) this.#runs[index] = reportWithCredit(run, money, attempt, how);
  }

  /** The batch's report, once every run is reported. */
  report(batch: {
    batchId: string;
    perRun: BudgetLimits | undefined;
    total: StrictLimits | undefined;
    startedAt: number;
    stopped: { reason: SkipReason; message: string } | undefined;
  }): DistributedBatchReport {
    const { batchId, perRun, total, startedAt, stopped } = batch;
    const totals = this.#runs.reduce<UsageTotals>((sum, run) => addUsage(sum, run!.usage), emptyUsage());
    return {
      runs: this.#runs as DistributedRunReport[],
      totals: { ...totals, outcomes: { ...this.#outcomes } },
      limits: {
        ...(perRun === undefined ? {} : { perRun: { ...perRun } }),
        ...(total === undefined ? {} : { total: { ...total } }),
      },
      concurrency: Object.values(this.#workers).reduce((sum, w) => sum + w.concurrency, 0),
      ...(total?.whenSpent === 'pause' ? { raises: this.#raises.map((r) => ({ ...r })) } : {}),
      durationMs: Date.now() - startedAt,
      ...(stopped === undefined || this.#outcomes.skipped === 0 ? {} : { stopped }),
      batchId,
      budget: { ...this.usage, wallMs: Date.now() - startedAt },
      workers: Object.fromEntries(Object.entries(this.#workers).map(([worker, w]) => [worker, { ...w }])),
    };
  }

  #finished(index: number, run: DistributedRunReport): void {
    this.#runs[index] = run;
    this.#running.delete(index);
    this.#parked.delete(index);
    this.#asking.delete(index);
    this.#outcomes[run.outcome] += 1;
    if (run.worker !== undefined) (this.#workers[run.worker] ??= { concurrency: 0, runs: 0 }).runs += 1;
    if (run.outcome === 'skipped') {
      const skip = run.error as { reason?: SkipReason } | undefined;
      const message = run.error?.message ?? 'skipped';
      this.#emit({ type: 'skipped', count: 1, reason: skip?.reason ?? 'aborted', message });
    } else this.#emit({ type: 'finished', index, run });
  }

  #snapshot(event: BatchProgress['event']): BatchProgress {
    return {
      done: this.done,
      total: this.#ids.length,
      running: this.#running.size,
      outcomes: { ...this.#outcomes },
      usage: { ...this.usage },
      event,
    };
  }

  #emit(event: BatchProgress['event']): void {
    this.#last = this.#snapshot(event);
    if (this.#onProgress === undefined) return;
    try {
      const returned: unknown = this.#onProgress(this.#last);
      if (returned instanceof Promise) returned.catch(() => undefined);
    } catch {
      // A failing progress callback must not stop the batch.
    }
  }
}

function fromWire(wire: WireRunReport): DistributedRunReport {
  const { error, historyError, ...rest } = wire;
  return {
    ...rest,
    ...resumeFromWire(wire),
    ...(error === undefined ? {} : { error: errorFromWire(error) }),
    ...(historyError === undefined ? {} : { historyError: errorFromWire(historyError) }),
  };
}

import { batchContext } from './batchApproval';
import { DelayedError, type Job } from 'bullmq';
import { messageOf } from '../../internal/messageOf';
import { batchKeys, type BatchKeys } from './batchKeys';
import { RAISES_CODE } from './budgetFields';
import { JobLeases } from './JobLeases';
import { ParkWatch } from './ParkWatch';
import { parkRun, type RunParking } from './parkRun';
import { pushParkEvent } from './parkEvents';
import { RedisBudget, spentFromReply } from './RedisBudget';
import { runScript } from './redisScripts';
import { lostReport, parseBatchMeta, recordOnce, skippedReport, type BatchMeta } from './runRecords';
import { runApprovals } from './workerApprovals';
import type { WorkerContext } from './WorkerContext';
import { WorkerSlots } from './WorkerSlots';
import { runWorkerTask, type JobData } from './runWorkerTask';
import type { WireRunReport } from './wireReport';

/**
 * A worker's processor of jobs, and what its jobs share: the runs in flight of each batch (to
 * cancel them), the batches aborted, its slots, and the runs that parked and went on in a slot
 * without their job (BullMQ's concurrency is lowered by them).
 */
export class JobProcessor {
  /** What parked runs wait for (a raise, their answers), heard on the worker's channels or polled. */
  readonly watch: ParkWatch;
  readonly #ctx: WorkerContext;
  readonly #metas = new Map<string, Promise<BatchMeta | undefined>>();
  readonly #inFlight = new Map<string, Set<AbortController>>();
  readonly #aborted = new Map<string, string>();
  // Runs in a slot never pass `concurrency`, those that went on after a park included; parked ones hold none.
  readonly #slots: WorkerSlots;
  readonly #leases: JobLeases;
  /** Sets BullMQ's concurrency of this worker. */
  readonly #resize: (concurrency: number) => void;
  #running = 0;
  /** Jobs being handed back as the worker closes. */
  #handingBack = 0;
  /** Runs in a slot whose job BullMQ no longer counts (they parked, and went on after a raise). */
  #detachedInSlot = 0;

  constructor(ctx: WorkerContext, resize: (concurrency: number) => void) {
    const { settings } = ctx;
    this.#ctx = ctx;
    this.#resize = resize;
    this.#slots = new WorkerSlots(settings.concurrency);
    this.watch = new ParkWatch(settings.onError);
    this.#leases = new JobLeases(ctx.redis, settings.lockDurationMs, ctx.within, settings.onError);
  }

  /** Runs of this worker not ended, parked ones included. */
  get running(): number {
    return this.#running;
  }

  /** Batch `batchId` is aborted: its runs in flight are cancelled, and those it starts later begin so. */
  abort(batchId: string, why: string): void {
    this.#aborted.set(batchId, why);
    for (const controller of this.#inFlight.get(batchId) ?? []) controller.abort(why);
  }

  /** Runs not ended, and jobs being handed back: what a closing worker waits for. */
  get busy(): number {
    return this.#running + this.#handingBack;
  }

  /**
   * The worker closes: a job it takes from now on, or one waiting for a slot, is not begun but
   * handed back to the queue for another worker (BullMQ may deliver a job it was fetching as
   * it paused). Runs in flight, and parked runs that go on, are not touched.
   */
  close(): void {
    this.#slots.close();
  }

  /** Cancels every run in flight. */
  cancelAll(reason: string): void {
    for (const controllers of this.#inFlight.values()) for (const controller of controllers) controller.abort(reason);
  }

  /** BullMQ's processor: runs the job's task, or reports why it is not run. */
  readonly process = async (job: Job<JobData>, token?: string): Promise<void> => {
    const { batchId, task } = job.data;
    const keys = batchKeys(this.#ctx.settings.prefix, this.#ctx.settings.name, batchId);
    const meta = await this.#ctx.within(`reading batch ${batchId}`, () => this.#metaOf(batchId, keys));
    if (meta === undefined) return; // the batch is over and its keys are gone: nobody waits for this run
    if (!(await this.#slots.take())) {
      this.#handingBack += 1;
      try {
        return await this.#leases.handBack(job, token, task.id);
      } finally {
        this.#handingBack -= 1;
      }
    }
    const controller = new AbortController();
    const controllers = this.#inFlight.get(batchId) ?? new Set();
    this.#inFlight.set(batchId, controllers.add(controller));
    this.#running += 1;
    const end = (inSlot: boolean): void => {
      this.#running -= 1;
      controllers.delete(controller);
      if (controllers.size === 0) this.#inFlight.delete(batchId);
      if (inSlot) this.#slots.free();
    };
    let whole: Promise<void> | undefined;
    let parking: RunParking | undefined;
    let detached = false;
    try {
      const attempt = await this.#begin(job, token, keys, meta);
      if (attempt === undefined) return;
      const why = this.#aborted.get(batchId);
      if (why !== undefined) controller.abort(why);
      parking = this.#parking(job.data, keys, meta, attempt, controller, () => recount());
      // Counts the run among those BullMQ no longer sees while it is in a slot without its job.
      let counted = false;
      const recount = (ended = false): void => {
        const should = detached && !ended && parking!.inSlot;
        if (should === counted) return;
        counted = should;
        this.#detachedInSlot += should ? 1 : -1;
        this.#resize(Math.max(1, this.#ctx.settings.concurrency - this.#detachedInSlot));
      };
      whole = runWorkerTask(this.#ctx, keys, meta, job.data, attempt, controller.signal, parking).then((report) =>
        this.#record(keys, job.data, report),
      );
      if (parking === undefined) return await whole;
      const first = await Promise.race([whole.then(() => 'ended'), parking.parked.then(() => 'parked')]);
      if (first === 'ended') return await whole;
      // Parked: its job leaves BullMQ's active list, so this worker's BullMQ slot goes to another job.
      detached = await this.#leases.letGo(job, token, task.id);
      if (!detached) return await whole;
      recount();
      this.#leases.keep(job, whole, () => {
        recount(true);
        end(parking!.inSlot);
      });
      throw new DelayedError();
    } finally {
      if (!detached) end(whole === undefined || (parking?.inSlot ?? true));
    }
  };

  /**
   * Begins the job's run in Redis: resolves with its attempt when it is to run now; else reports
   * why not (the run reported already, lost, aborted, the budget spent or gone, or waiting for a
   * raise) and resolves with undefined.
   */
  async #begin(
    job: Job<JobData>,
    token: string | undefined,
    keys: BatchKeys,
    meta: BatchMeta,
  ): Promise<number | undefined> {
    const { redis, within, settings } = this.#ctx;
    const { id, concurrency } = settings;
    const { batchId, index, task } = job.data;
    const reply = (await within(`starting run ${task.id} of batch ${batchId}`, () =>
      runScript(
        redis,
        'asmBegin',
        [keys.budget, keys.started, keys.results, keys.events, keys.abort, keys.waiting],
        [index, id, meta.retryLostRuns, concurrency, job.token ?? `${id}:${job.id}:${Date.now()}`],
      ),
    )) as string[];
    switch (reply[0]) {
      case 'done':
        return undefined;
      case '!missing':
        // Its budget is gone (Redis restarted without persistence, or the key was evicted): not run without it.
        settings.onError(
          new Error(
            `run ${task.id} of batch ${batchId} not started: the batch's budget is gone from Redis (${keys.budget})`,
          ),
        );
        return undefined;
      case 'lost': {
        // Its holds in Redis go with it, the calls' charged as uncertain (they may have left, or may
        // still: its worker may live on), and its last attempt is fenced: none outlives its run.
        const start = JSON.parse(reply[1]!) as { w: string; a: number };
        if (meta.total?.maxCostUsd !== undefined)
          await new RedisBudget(redis, keys, meta.total, index, {
            timeoutMs: settings.redisTimeoutMs,
            attempt: start.a + 1,
          })
            .writeOff()
            .catch((error: unknown) =>
              settings.onError(
                new Error(
                  `run ${task.id} of batch ${batchId}: its holds could not be written off: ${messageOf(error)}`,
                ),
              ),
            );
        await this.#record(keys, job.data, await lostReport(redis, keys, index, task.id, start));
        return undefined;
      }
      case 'aborted':
        await this.#record(keys, job.data, skippedReport(task.id, 'aborted', reply[1]!, id));
        return undefined;
      case 'stopped': {
        const spent = spentFromReply(reply.slice(1), meta.total ?? {});
        const message = spent?.message ?? 'shared budget exceeded';
        await this.#record(keys, job.data, skippedReport(task.id, 'budget_exceeded', message, id));
        return undefined;
      }
      case 'wait':
        await this.#leases.waitForRaise(job, token, keys, Number(reply[1]));
        return undefined;
    }
    return Number(reply[1]);
  }

  /** How the run parks, when it may: at a paused cap, or for approval (its worker's, or its framework's); undefined when it never parks. */
  #parking(
    data: JobData,
    keys: BatchKeys,
    meta: BatchMeta,
    attempt: number,
    controller: AbortController,
    onSlot: () => void,
  ): RunParking | undefined {
    const { batchId, index, task } = data;
    let ctx = this.#ctx;
    try {
      ctx = batchContext(ctx, meta, batchId);
    } catch {
      // A worker's policy the batch's refuses: runWorkerTask ends the run in Error, saying so.
    }
    const { redis, within, settings } = ctx;
    const { approve, drive, prefix, name, onError } = settings;
    // A framework run may stop for its framework's own approvals (AI SDK `needsApproval`) at any call.
    const asks = approve !== undefined || drive !== undefined;
    if (meta.total?.whenSpent !== 'pause' && !asks) return undefined;
    return parkRun({
      slots: this.#slots,
      watch: this.watch,
      budgetKey: keys.budget,
      readRaises: () => this.#readRaises(keys),
      approvals: !asks
        ? undefined
        : runApprovals({ redis, keys, prefix, name, batchId, index }, attempt, this.watch, within),
      signal: controller.signal,
      end: (reason) => controller.abort(reason),
      onSlot,
      onProblem: (message) => onError(new Error(`run ${task.id} of batch ${batchId}: ${message}`)),
      onPark: (parked) => pushParkEvent(redis, keys, index, parked, onError),
    });
  }

  #metaOf(batchId: string, keys: BatchKeys): Promise<BatchMeta | undefined> {
    let meta = this.#metas.get(batchId);
    if (meta === undefined) {
      meta = this.#ctx.redis.get(keys.meta).then((json) => (json === null ? undefined : parseBatchMeta(json)));
      this.#metas.set(batchId, meta);
      meta.catch(() => this.#metas.delete(batchId));
    }
    return meta;
  }

  /** A batch's raise count, for its runs parked at the cap: Infinity once it stopped on another limit (or is gone). */
  async #readRaises(keys: BatchKeys): Promise<number> {
    const [count, stopped] = await this.#ctx.within(`reading the raises of ${keys.budget}`, () =>
      this.#ctx.redis.hmget(keys.budget, RAISES_CODE, 'x'),
    );
    return stopped !== null || count === null ? Infinity : Number(count);
  }

  /** Writes a run's report; says so when it cannot be (the batch gone, or another report first). */
  #record(keys: BatchKeys, data: JobData, report: WireRunReport): Promise<void> {
    const { redis, within, settings } = this.#ctx;
    return recordOnce(redis, within, settings.onError, { keys, batchId: data.batchId, index: data.index, report });
  }
}

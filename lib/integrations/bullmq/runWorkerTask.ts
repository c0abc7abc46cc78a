import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  addUsage,
  assertBoundsCalls,
  emptyUsage,
  lockFolder,
  reasonsOverAttempts,
  runTask,
  safeFileName,
  type RunTaskOptions,
} from 'agent-state-machine/internal';
import { InvalidArgumentError, type AgentLoop } from 'agent-state-machine';
import type { StoreBatch } from 'agent-state-machine/batch';
import { asError } from '../../internal/asError';
import { messageOf } from '../../internal/messageOf';
import type { BatchKeys } from './batchKeys';
import type { StrictLimits } from './budgetFields';
import { pricingFromTable } from './PriceTable';
import { RedisBudget } from './RedisBudget';
import type { RunParking } from './parkRun';
import { batchContext } from './batchApproval';
import { errorReport, type BatchMeta } from './runRecords';
import { finishedReport, storeOwner, type EarlierAttempt, type EarlierReasons } from './WorkerStore';
import type { DistributedTask } from './DistributedTask';
import { reportWithCredit, runMoneyInRedis, withRedisMoney } from './takeoverCredit';
import { errorToWire, type WireRunReport } from './wireReport';
import type { WorkerContext } from './WorkerContext';
import { workerRunOptions } from './workerRunOptions';

/** What a worker's job carries: the task and its place in its batch. */
export interface JobData {
  batchId: string;
  index: number;
  task: DistributedTask;
}

/**
 * Runs one task of a batch on a worker, as attempt `attempt` of it: through `runTask`, under the
 * batch's budget in Redis, its records in the worker's history folder or store. Resolves with
 * its report; what goes wrong in the run is in the report, never thrown. After the first attempt,
 * the report's dollars are the run's as Redis counts them (`withCredit`).
 */
export async function runWorkerTask(
  worker: WorkerContext,
  keys: BatchKeys,
  meta: BatchMeta,
  data: JobData,
  attempt: number,
  signal: AbortSignal,
  parking: RunParking | undefined,
): Promise<WireRunReport> {
  const report = await runAttempt(worker, keys, meta, data, attempt, signal, parking);
  return withCredit(worker, keys, data, report);
}

/** `runWorkerTask`'s run, its report as the attempt counted it. */
async function runAttempt(
  worker: WorkerContext,
  keys: BatchKeys,
  meta: BatchMeta,
  data: JobData,
  attempt: number,
  signal: AbortSignal,
  parking: RunParking | undefined,
): Promise<WireRunReport> {
  const { batchId, index, task } = data;
  let ctx: WorkerContext;
  try {
    // Under the batch's approval policy when submitBatch stored one; a worker's that says otherwise ends the run.
    ctx = batchContext(worker, meta, batchId);
  } catch (error) {
    return errorReport(task.id, asError(error), worker.settings.id, attempt);
  }
  const { redis, inStore, settings } = ctx;
  const { id, prefix, name, concurrency, historyDir, drive, agent } = settings;
  const price = meta.pricing !== undefined ? pricingFromTable(meta.pricing) : settings.pricing;
  let historyFile: string | undefined;
  if (historyDir !== undefined) {
    const dir = path.join(historyDir, batchId);
    fs.mkdirSync(dir, { recursive: true });
    // The workers of this batch share its folder; any other batch (runBatch, or a batch of the
    // same id on another Redis or queue) is refused it, and the run is not made.
    try {
      lockFolder(dir, storeOwner(redis, prefix, name, batchId), { shared: true });
    } catch (error) {
      return errorReport(task.id, asError(error), id, attempt);
    }
    historyFile = path.join(dir, `${index}-${safeFileName(task.id)}.jsonl`);
  }
  // Charges ride on the next reservation: one round trip per call; the last is settled below.
  // Fenced by its attempt: once a later attempt takes the run over, this one reserves nothing.
  const budget = new RedisBudget(redis, keys, meta.total ?? {}, index, {
    deferCharges: true,
    timeoutMs: settings.redisTimeoutMs,
    attempt,
  });
  if (meta.total?.whenSpent === 'pause' && drive !== undefined)
    return errorReport(
      task.id,
      new InvalidArgumentError(
        'total.whenSpent',
        "'stop' (or left out) for a batch run by a worker with `drive`: a framework's loop cannot be paused at a call its cap refused; pausing runs through `agent` only",
        'pause',
      ),
      id,
      attempt,
    );
  const settle = (): Promise<unknown> => settleCharge(ctx, budget, task.id, batchId);
  // In a store: the batch joined, and what an earlier attempt of this run left there (its worker lost).
  let inBatch: StoreBatch | undefined;
  let before: EarlierAttempt = { kind: 'not_started' };
  if (inStore !== undefined) {
    try {
      inBatch = await inStore.batch(prefix, name, batchId, keys, concurrency);
      before = await inStore.earlier(inBatch, task.id, index, keys, budget, attempt);
    } catch (error) {
      // Not settled: a settle would let go of the earlier attempt's holds, which a takeover that
      // did not happen never charged. They stay held (the safe side).
      return errorReport(task.id, asError(error), id, attempt);
    }
    if (before.kind === 'finished') {
      await settle();
      return { ...finishedReport(task.id, before), worker: id, attempt };
    }
  }
  if (attempt > 1 && before.kind === 'not_started' && meta.total?.maxCostUsd !== undefined) {
    // No records of the earlier attempt (no store, or none written yet: its worker may live on
    // and write them): its calls' holds count as spent (uncertain), every hold it left is let go
    // and it is fenced, before this attempt reserves (its settle lets go of the run's holds).
    try {
      await budget.writeOff();
    } catch (error) {
      return errorReport(task.id, asError(error), id, attempt);
    }
  }
  let resumeFrom = before.kind === 'interrupted' ? before.resumeFrom : undefined;
  if (attempt > 1 && before.kind === 'not_started' && inBatch !== undefined) {
    // The earlier attempt wrote nothing to the store, yet Redis counts its money (its calls'
    // holds, charged by the write-off above): the run starts again from that spend, so that its
    // records in the store carry it, as its report does (withCredit).
    try {
      const money = await runMoneyInRedis(redis, keys, index);
      if (money.costUsd > 0 || money.releasedUsd > 0 || money.unpricedCalls > 0)
        resumeFrom = { journal: [], usage: withRedisMoney(emptyUsage(), money) };
    } catch (error) {
      return errorReport(task.id, asError(error), id, attempt);
    }
  }
  const runOptions = {
    runId: task.id,
    metadata: { taskId: task.id, index, batchId, worker: id, attempt },
  };
  // Why money is uncertain or of unknown cost, as runBatch reports it: the run's lines know each
  // call's reason, and a run taken over adds those of the attempts cut off, each call once.
  const earlier = before.kind === 'interrupted' ? before.reasons : undefined;
  let reasons = reasonsOf(earlier?.uncertain ?? [], earlier?.unpriced ?? []);
  const onRunFacts: NonNullable<RunTaskOptions['onRunFacts']> = (facts) => {
    reasons =
      earlier === undefined
        ? reasonsOf(facts.uncertain, facts.unpriced)
        : reasonsOf(
            reasonsOverAttempts(facts.uncertain, [earlier.uncertain, facts.attempt.uncertainWhy]),
            reasonsOverAttempts(facts.unpriced, [earlier.unpriced, facts.attempt.unpricedWhy]),
          );
  };
  const run = await runTask(
    drive !== undefined
      ? {
          id: task.id,
          input: task.input,
          drive: (mirror, ctx) => drive(task, mirror, { signal: ctx.signal, batchId }),
        }
      : {
          id: task.id,
          input: task.input,
          agent: (ctx) => boundedLoop(agent!(task, { signal: ctx.signal, batchId }), meta.total),
        },
    {
      ...workerRunOptions(
        ctx,
        { index, meta, budget, price, signal },
        parking,
        { historyFile, inBatch, resumeFrom },
        runOptions,
      ),
      onRunFacts,
    },
  );
  await settle();
  const capWait = parking?.capWait();
  const approvalWait = parking?.approvalWait();
  return {
    id: task.id,
    outcome: run.outcome,
    // A run whose turn started counted the earlier attempt's spend in its usage; one that failed before (its agent, its history file) did not.
    usage: before.kind === 'interrupted' && run.countsEarlier !== true ? addUsage(before.usage, run.usage) : run.usage,
    durationMs: run.durationMs,
    transitions: run.transitions,
    ...(run.historyFile === undefined
      ? {}
      : { historyFile: historyDir === undefined ? run.historyFile : path.resolve(run.historyFile) }),
    ...(run.resume === undefined ? {} : { resumed: run.resume.mode, resume: run.resume }),
    ...(run.error === undefined ? {} : { error: errorToWire(run.error) }),
    ...(run.historyError === undefined ? {} : { historyError: errorToWire(run.historyError) }),
    ...(capWait === undefined ? {} : { capWait }),
    ...(approvalWait === undefined ? {} : { approval: approvalWait }),
    ...reasons,
    worker: id,
    attempt,
  };
}

/** A report's reasons, each list left out when it names no call. */
function reasonsOf(
  uncertain: EarlierReasons['uncertain'],
  unpriced: EarlierReasons['unpriced'],
): Pick<WireRunReport, 'uncertain' | 'unpriced'> {
  return {
    ...(uncertain.length === 0 ? {} : { uncertain: [...uncertain] }),
    ...(unpriced.length === 0 ? {} : { unpriced: [...unpriced] }),
  };
}

/**
 * The report of an attempt after the first, its dollars as Redis counts them for the run (every
 * attempt's charges, and the takeover's credit as uncertain with its reason: takeoverCredit.ts),
 * so that the runs' reports add up to the batch's budget. The first attempt's report is its own.
 */
async function withCredit(
  ctx: WorkerContext,
  keys: BatchKeys,
  data: JobData,
  report: WireRunReport,
): Promise<WireRunReport> {
  const attempt = report.attempt ?? 1;
  if (attempt <= 1) return report;
  try {
    const money = await ctx.within(`reading the money of run ${data.task.id} of batch ${data.batchId}`, () =>
      runMoneyInRedis(ctx.redis, keys, data.index),
    );
    return reportWithCredit(report, money, attempt);
  } catch (error) {
    ctx.settings.onError(
      new Error(
        `run ${data.task.id} of batch ${data.batchId}: its money in Redis could not be read; it is reported as this attempt counted it: ${messageOf(error)}`,
      ),
    );
    return report;
  }
}

/** Sends a run's last charge, kept until now (deferCharges). */
function settleCharge(ctx: WorkerContext, budget: RedisBudget, taskId: string, batchId: string): Promise<unknown> {
  return budget
    .settle()
    .catch((error: unknown) =>
      ctx.settings.onError(
        new Error(`run ${taskId} of batch ${batchId}: its last charge did not reach Redis: ${messageOf(error)}`),
      ),
    );
}

/** A worker's loop, refused by the words of a strict cap when the batch's total cap is strict and the loop cannot bound its calls. */
async function boundedLoop(loop: AgentLoop | Promise<AgentLoop>, total: StrictLimits | undefined): Promise<AgentLoop> {
  const ready = await loop;
  if (total?.maxCostUsd !== undefined && total.strict !== false) assertBoundsCalls(ready, 'total.maxCostUsd');
  return ready;
}

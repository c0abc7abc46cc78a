import type { Redis } from 'ioredis';
import {
  finishedRunReport,
  reasonsOverAttempts,
  resumedUsage,
  storeRunJournal,
  storeRunState,
  type TaskState,
} from 'agent-state-machine/internal';
import type { BatchManifest, RunStore, StoreBatch } from 'agent-state-machine/batch';
import type { ResumeFrom, UsageDelta, UsageTotals } from 'agent-state-machine';
import { CHARGE_FIELD_NAMES } from '../../internal/fieldLists';
import type { BatchKeys } from './batchKeys';
import { USAGE_CODES, usageFromStrings } from './budgetFields';
import { addressOf } from './connection';
import type { RedisBudget } from './RedisBudget';
import { lessCredited, runMoneyInRedis, withRedisMoney } from './takeoverCredit';
import { errorToWire, type WireRunReport } from './wireReport';

/** What a run of a distributed batch finds in the store before it starts. */
export type EarlierAttempt =
  | { kind: 'not_started' }
  /** Its run ended, and its worker was lost before reporting it: reported from the store, not run again. */
  | Extract<TaskState, { kind: 'finished' }>
  /**
   * Cut off with its worker: recovered from its journal, what it spent counted, and why its
   * money was uncertain or of unknown cost over the attempts cut off (`lessCredited`).
   */
  | { kind: 'interrupted'; resumeFrom: ResumeFrom; usage: UsageTotals; reasons: EarlierReasons };

/** Why an earlier attempt's money was uncertain or of unknown cost, each call once, as a report says it. */
export interface EarlierReasons {
  readonly uncertain: ReadonlyArray<{ readonly why: string; readonly calls: number }>;
  readonly unpriced: ReadonlyArray<{ readonly why: string; readonly calls: number }>;
}

/**
 * Who writes a distributed batch in a store: its Redis, queue and id, the same for its producer
 * and every worker, so that they share the batch and any other batch of that id is refused.
 */
export function storeOwner(redis: Redis, prefix: string, name: string, batchId: string): string {
  return `${addressOf(redis)}/${prefix}:${name}/${batchId}`;
}

/**
 * A worker's batches in its `RunStore`: each joined once, shared with the batch's producer and
 * its other workers (the lock of each is held until the worker closes), and what a run left
 * there when an earlier worker of it was lost — the same readers as `runBatch({ resume })`.
 */
export class WorkerStore {
  readonly store: RunStore;
  readonly #redis: Redis;
  readonly #batches = new Map<string, Promise<StoreBatch>>();

  constructor(store: RunStore, redis: Redis) {
    this.store = store;
    this.#redis = redis;
  }

  /** Batch `batchId`, joined (its manifest recorded from its task ids in Redis when the producer did not). */
  batch(prefix: string, name: string, batchId: string, keys: BatchKeys, concurrency: number): Promise<StoreBatch> {
    let batch = this.#batches.get(batchId);
    if (batch === undefined) {
      batch = (async () => {
        const ids = JSON.parse((await this.#redis.get(keys.ids)) ?? '[]') as string[];
        const manifest: Omit<BatchManifest, 'type' | 'version'> = {
          startedAt: Date.now(),
          concurrency,
          limits: {},
          tasks: ids.map((id) => ({ id, file: id })),
        };
        return this.store.openBatch({
          batchId,
          owner: storeOwner(this.#redis, prefix, name, batchId),
          overwrite: false,
          shared: true,
          manifest,
        });
      })();
      this.#batches.set(batchId, batch);
      batch.catch(() => this.#batches.delete(batchId));
    }
    return batch;
  }

  /**
   * What run `runId` left in `batch` before this attempt. A cut-off attempt is set aside (kept,
   * readable) once its journal is read, and `budget` takes the run over (`RedisBudget.takeOver`):
   * the holds it left there are charged at their worst case and let go, what its records say it
   * spent beyond what reached Redis and beyond those holds is charged, and it is fenced — money
   * that may have been spent counts as spent, once, and held no more. Nothing written yet: not
   * taken over here (the caller writes the earlier attempt off).
   */
  async earlier(
    batch: StoreBatch,
    runId: string,
    index: number,
    keys: BatchKeys,
    budget: RedisBudget,
    attempt: number,
  ): Promise<EarlierAttempt> {
    const state = await storeRunState(batch, runId, false);
    if (state.kind === 'not_started') return state;
    const inRedis = usageFromStrings(
      await this.#redis.hmget(keys.runUsage, ...USAGE_CODES.map((code) => `${index}:${code}`)),
    );
    const missing: UsageDelta = {};
    for (const key of CHARGE_FIELD_NAMES) {
      // Not a hold let go that Redis was not told of (charges are sent with the next call): the
      // takeover charges the hold Redis still has, as uncertain, and released it would count twice.
      if (key === 'releasedUsd') continue;
      const more = (state.usage[key] ?? 0) - (inRedis[key] ?? 0);
      if (more > 0) missing[key] = more;
    }
    // Its holds are charged as they go, in one step: a hold with no reserve line in its records
    // may be of a call still to leave (its worker may live on, its lock lapsed).
    await budget.takeOver(missing);
    // Its dollars as the batch counts them now: what its records say, and the takeover's credit
    // (the holds of its calls, one whose reserve line never reached the store among them).
    const money = await runMoneyInRedis(this.#redis, keys, index);
    // Every attempt in the store was taken over (by this worker, or one before): the calls their
    // credit charges again are named by it, once, not also by their own reason. The newest
    // attempt's last call is among them when its uncertain money had not reached Redis.
    const newestCredited = (missing.uncertainUsd ?? 0) > 0;
    if (state.kind === 'finished') {
      const uncertain = lessCredited(state.uncertain ?? [], state.attempts ?? [], money, newestCredited, attempt);
      const { uncertain: _all, ...rest } = state;
      return uncertain.length === 0 ? rest : { ...rest, uncertain: [...uncertain] };
    }
    const journal = await storeRunJournal(batch, runId, false);
    await batch.setAside(runId);
    const attempts = state.attempts ?? [];
    const reasons: EarlierReasons = {
      uncertain: lessCredited(
        reasonsOverAttempts(
          [],
          attempts.map((a) => a.uncertainWhy),
        ),
        attempts,
        money,
        newestCredited,
        attempt,
      ),
      unpriced: reasonsOverAttempts(
        [],
        attempts.map((a) => a.unpricedWhy),
      ),
    };
    // The run goes on from them, so its records, and the store's figures, carry the credit too.
    return {
      kind: 'interrupted',
      resumeFrom: { journal, usage: withRedisMoney(resumedUsage(state.usage, journal), money) },
      usage: state.usage,
      reasons,
    };
  }

  /** Frees the worker's hold on every batch it joined. */
  async close(): Promise<void> {
    const batches = [...this.#batches.values()];
    this.#batches.clear();
    await Promise.all(batches.map((b) => b.then((batch) => batch.close()).catch(() => undefined)));
  }
}

/** The report of a run that ended before its worker was lost: what the store says, the run not run again. */
export function finishedReport(id: string, state: Extract<EarlierAttempt, { kind: 'finished' }>): WireRunReport {
  const { error, ...report } = finishedRunReport(id, state);
  return { ...report, ...(error === undefined ? {} : { error: errorToWire(error) }) };
}

/** The Redis keys of one batch, all under `<prefix>:<queue name>:asm:<batch id>`. */
export interface BatchKeys {
  /** JSON: the batch's settings, which workers read once per batch. */
  meta: string;
  /** Hash: the batch's usage and its `total` limits — the cluster-wide budget. */
  budget: string;
  /** Hash: usage per run (`<index>:<code>`, a counter per usage field: budgetFields.ts), so a lost run's spend is known. */
  runUsage: string;
  /** Hash: index → the last start of that run `{ w: worker, a: attempt }`. */
  started: string;
  /** Hash: index → the run's report (JSON). Written once per run (HSETNX): exactly-once reporting. */
  results: string;
  /** List: what happened, in order (`s`tarted / `f`inished), read by the producer from an offset. */
  events: string;
  /** String: set (with the reason) when the batch is aborted. */
  abort: string;
  /** String: the tasks' ids (a JSON array), so that any process can attach to the batch and name its runs. */
  ids: string;
  /** Set: indexes of tasks not started because the batch was paused at its cap; a raise brings their jobs back. */
  waiting: string;
  /**
   * Hash: index → the run's open approval request (`{r, c}`: its id and its call ids), and
   * `<index>:<request id>:<call id>` → the answer to that call (JSON), written once.
   */
  approvals: string;
  /**
   * Hash: `<index>:<call id>` → the answer a run took and went on with (JSON, with who gave it
   * and when), kept after its request closed, so that a late answer is told the call was
   * answered, and how, not that nothing waits.
   */
  answered: string;
}

/** The channel a queue's workers hear raises of a paused cap on (the message is the batch id). */
export function raiseChannel(prefix: string, name: string): string {
  return `${prefix}:${name}:asm:raise`;
}

/** The channel a queue's workers hear that a run's approval request is answered on (the message is `<batch id>:<index>`). */
export function approvalChannel(prefix: string, name: string): string {
  return `${prefix}:${name}:asm:approval`;
}

/** The channel a queue's workers hear aborts on (the message is the batch id). */
export function abortChannel(prefix: string, name: string): string {
  return `${prefix}:${name}:asm:abort`;
}

export function batchKeys(prefix: string, name: string, batchId: string): BatchKeys {
  const base = `${prefix}:${name}:asm:${batchId}`;
  return {
    meta: `${base}:meta`,
    budget: `${base}:budget`,
    runUsage: `${base}:runusage`,
    started: `${base}:started`,
    results: `${base}:results`,
    events: `${base}:events`,
    abort: `${base}:abort`,
    ids: `${base}:ids`,
    waiting: `${base}:waiting`,
    approvals: `${base}:approvals`,
    answered: `${base}:answered`,
  };
}

/** Every key of a batch, in the order the record and skip scripts take them (budget, results, events, started, then the rest). */
export function recordKeys(keys: BatchKeys): string[] {
  return [
    keys.budget,
    keys.results,
    keys.events,
    keys.started,
    keys.meta,
    keys.runUsage,
    keys.abort,
    keys.ids,
    keys.waiting,
    keys.approvals,
    keys.answered,
  ];
}

/** A batch id: it names keys and a history folder, so no `:` and no path separators. */
export function isBatchId(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9._-]{1,200}$/.test(value) && value !== '.' && value !== '..';
}

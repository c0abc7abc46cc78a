import { MIRROR_CANNOT } from '../agent/options/optionKeys';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';

/** The keys of `runBatch(tasks, options)`, checked against `BatchOptions` by assertKnownOptions so that they cannot drift. */
export const BATCH_OPTION_KEYS = Object.freeze({
  concurrency: true,
  perRun: true,
  total: true,
  onPause: true,
  retry: true,
  historyDir: true,
  store: true,
  batchId: true,
  historyDurability: true,
  historyGroupCommit: true,
  overwriteHistory: true,
  resume: true,
  resumeTools: true,
  salvage: true,
  signal: true,
  onProgress: true,
  progress: true,
  logger: true,
  pricing: true,
  onUnknownCost: true,
  billing: true,
  toolConcurrency: true,
  table: true,
  approve: true,
  approvalTimeoutMs: true,
  onApproval: true,
  compact: true,
  journal: true,
  ledger: true,
  ledgerDefaultMaxCostUsd: true,
  minOutputTokens: true,
  externalBudgets: true,
  cancelGraceMs: true,
  clock: true,
  sleep: true,
  random: true,
  onRun: true,
});

/** Batch options that reach only agent tasks, each with why a framework task cannot honour it. */
const AGENT_TASKS_ONLY: Readonly<Record<string, string>> = Object.freeze({ ...MIRROR_CANNOT });

/**
 * Refuses, by name, a batch option that a framework task in the batch could not honour: it would
 * reach the agent tasks and silently not the framework ones. `false` counts as not given.
 */
export function assertFrameworkTasksCanHonour(options: object, taskId: string): void {
  for (const [key, why] of Object.entries(AGENT_TASKS_ONLY)) {
    const value = (options as Record<string, unknown>)[key];
    if (value === undefined || value === false) continue;
    throw new InvalidArgumentError(
      key,
      `left out of runBatch() when it runs a framework task (\`${taskId}\`): ${why}`,
      value,
    );
  }
}

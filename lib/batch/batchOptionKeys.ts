import { MIRROR_CANNOT } from '../agent/options/optionKeys';
import { keysOn } from '../internal/optionTable';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';

/** The keys of `runBatch(tasks, options)`, checked against `BatchOptions` by assertKnownOptions so that they cannot drift. */
export const BATCH_OPTION_KEYS = keysOn('batch');

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

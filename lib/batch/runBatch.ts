import { assertKnownOptions } from '../machine/assertKnownOptions';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { BATCH_OPTION_KEYS } from './batchOptionKeys';
import { checkBatchTasks } from './tasks/checkBatchTasks';
import type { FrameworkTask } from './tasks/runFrameworkTask';
import type { BatchOptions, BatchTask } from './BatchOptions';
import type { BatchReport } from './BatchReport';

// runBatch's types, where its callers have found them.
export type { BatchOptions, BatchTask } from './BatchOptions';
export {
  RUN_OUTCOMES,
  type BatchProgress,
  type BatchReport,
  type BatchTotals,
  type RunOutcome,
  type RunReport,
} from './BatchReport';

/**
 * Runs many agent tasks, each as one turn through its own `AgentWithStateMachine`, at most
 * `concurrency` at once, under per-run limits and a budget shared by the whole batch. Resolves
 * with a report of every run in task order; it rejects only for bad arguments, before any run
 * starts.
 *
 * - Shared budget: every run charges the pool as usage happens, and checks it before each LLM
 *   call, each tool call and at CheckingBudget. Once a limit is reached, runs in flight end as
 *   `budget_exceeded` at their next check and runs not yet started are `skipped`. A dollar cap
 *   is strict unless `strict: false`: each call's worst case is held before it starts, so spend
 *   never passes it (a plain cap can be passed by at most one response per run in flight);
 *   call and tool counts never pass theirs.
 * - A run that throws anywhere (agent factory, adapter, history file) ends as `error` with the
 *   cause; the batch goes on.
 * - `signal`: runs in flight are cancelled (abandoned after `cancelGraceMs` if they ignore it,
 *   agent factories still pending included), the rest are skipped, and the report comes back.
 * - Memory: a run keeps only the adapter's bounded history while it runs and numbers after;
 *   `historyDir` gets the full history of each run, line by line, as it happens.
 */
export async function runBatch(
  tasks: Iterable<BatchTask | FrameworkTask>,
  options: BatchOptions = {},
): Promise<BatchReport> {
  // Checked and copied at the call, before the load below: a generator is read once, and a task
  // list or options (caps included) the caller reuses at once change nothing.
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  assertKnownOptions(options, BATCH_OPTION_KEYS, 'runBatch()');
  const list = checkBatchTasks(tasks);
  const settings: BatchOptions = { ...options };
  if ('perRun' in settings) settings.perRun = copied(settings.perRun);
  if ('total' in settings) settings.total = copied(settings.total);
  // Loaded here, not with the main entry: a batch's code is 35% of its bytes, and a process
  // that only wraps a loop never needs it (bench `coldstart`: the main entry ≤ 2× its floor).
  const { scheduleBatch } = await import('./scheduleBatch.js');
  return scheduleBatch(list, settings);
}

/** A cap object copied, with its `wrapUp` object (the rest are numbers); anything else as it is, for the checks to name. */
function copied<T>(value: T): T {
  if (!isObject(value)) return value;
  const copy = { ...value } as Record<string, unknown>;
  if (isObject(copy['wrapUp'])) copy['wrapUp'] = { ...copy['wrapUp'] };
  return copy as T;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

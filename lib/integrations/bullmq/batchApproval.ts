import {
  APPROVAL_EXTENSION,
  DEFAULT_TABLE,
  extendTable,
  InvalidArgumentError,
  WRAP_UP_EXTENSION,
} from 'agent-state-machine';
import type { TransitionTable } from 'agent-state-machine';
import type { BatchMeta } from './runRecords';
import type { WorkerContext } from './WorkerContext';

/** A batch's approval policy as `submitBatch({ approve })` stores it in Redis: tool names mapped to `true`. */
export type StoredApprovalPolicy = NonNullable<BatchMeta['approve']>;

/**
 * Checks `submitBatch`'s `approve` and `approvalTimeoutMs`: a plain object of tool names to
 * booleans (a function cannot be stored for every worker to read), and a non-negative timeout
 * that comes with a policy.
 */
export function assertBatchApproval(approve: unknown, timeoutMs: unknown): void {
  if (approve !== undefined) {
    if (typeof approve === 'function')
      throw new InvalidArgumentError(
        'approve',
        "an object { toolName: true }: the batch's policy is stored in Redis for every worker to read, and a function cannot be (give a function to startBatchWorker() instead, the same on every worker)",
        approve,
      );
    if (
      typeof approve !== 'object' ||
      approve === null ||
      Array.isArray(approve) ||
      Object.values(approve).some((v) => typeof v !== 'boolean')
    )
      throw new InvalidArgumentError(
        'approve',
        'an object { toolName: true } (tool names mapped to booleans)',
        approve,
      );
  }
  if (timeoutMs === undefined) return;
  if (!(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs >= 0))
    throw new InvalidArgumentError('approvalTimeoutMs', 'a non-negative number of milliseconds', timeoutMs);
  if (approve === undefined)
    throw new InvalidArgumentError('approve', 'an approval policy when approvalTimeoutMs is set', approve);
}

/** The tools a stored policy holds for approval, sorted. */
function heldTools(policy: StoredApprovalPolicy): string[] {
  return Object.keys(policy)
    .filter((name) => policy[name] === true)
    .sort();
}

let approvalTables: WorkerContext['tables'] | undefined;

/** The tables of a run that may ask approval, made once. */
function tablesWithApproval(): WorkerContext['tables'] {
  if (approvalTables === undefined) {
    const plain: TransitionTable<string> = extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION);
    approvalTables = { plain, wrapUp: extendTable(plain, WRAP_UP_EXTENSION) };
  }
  return approvalTables;
}

/**
 * The context a run of batch `batchId` runs in: with the batch's approval policy when
 * `submitBatch` stored one, so that every worker of the queue treats each tool of the batch
 * alike. A worker's own `approve` or `approvalTimeoutMs` that says otherwise is refused, by
 * name (the run ends in Error, saying what to change); one that says the same is fine. A batch
 * with no policy runs under the worker's, as before.
 */
export function batchContext(ctx: WorkerContext, meta: BatchMeta, batchId: string): WorkerContext {
  const { approve, approvalTimeoutMs } = meta;
  if (approve === undefined) return ctx;
  const { settings } = ctx;
  const tools = heldTools(approve);
  if (settings.approve !== undefined) {
    const same =
      typeof settings.approve !== 'function' && JSON.stringify(heldTools(settings.approve)) === JSON.stringify(tools);
    if (!same)
      throw new InvalidArgumentError(
        'approve',
        `left out of startBatchWorker(), or the same as batch ${batchId}'s policy, which submitBatch() stored (${JSON.stringify(approve)}): ` +
          'every worker of a batch treats its tools alike, under the policy the batch was submitted with',
        settings.approve,
      );
  }
  if (settings.approvalTimeoutMs !== undefined && settings.approvalTimeoutMs !== approvalTimeoutMs)
    throw new InvalidArgumentError(
      'approvalTimeoutMs',
      `left out of startBatchWorker(), or the same as batch ${batchId}'s (${approvalTimeoutMs === undefined ? 'none' : `${approvalTimeoutMs} ms`}), which submitBatch() stored`,
      settings.approvalTimeoutMs,
    );
  return {
    ...ctx,
    settings: {
      ...settings,
      approve,
      ...(approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs }),
    },
    tables: tablesWithApproval(),
  };
}

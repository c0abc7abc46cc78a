import type { RunStore } from './keeping/RunStore';
import type { AgentLoop } from '../agent/AgentLoop';
import { AgentWithStateMachine } from '../agent/AgentWithStateMachine';
import { assertBudgetLimits, type BudgetLimits } from '../agent/BudgetLimits';
import { isStrictCap } from '../agent/money/isStrictCap';
import { resolveResumeTools } from '../agent/journal/ResumeToolPolicy';
import { assertPricing, PRICING_EXPECTED } from '../agent/options/assertPricing';
import { groupCommitBounds } from '../history/JsonlHistorySinkOptions';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { assertTasksBoundCalls } from './tasks/assertTasksBoundCalls';
import { assertFrameworkTasksCanHonour } from './batchOptionKeys';
import type { BatchOptions, BatchTask } from './BatchOptions';
import { isFrameworkTask } from './tasks/checkBatchTasks';
import type { FrameworkTask } from './tasks/runFrameworkTask';
import { OPTION_DEFAULTS } from '../internal/optionTable';

// Used once, before any run, to have the adapter check the options it shares with the batch.
const PROBE_AGENT: AgentLoop = {
  sendUserMessage: () => Promise.resolve({}),
  sendToolResults: () => Promise.resolve({}),
  runTool: (call) => Promise.resolve({ callId: call.id, output: '' }),
};

// Stands in for a run's history file when the probe checks the options.
const PROBE_SINK = { write: () => undefined, journal: () => undefined };

/**
 * Checks `runBatch`'s options before any run starts, each bad one named, and resolves what every
 * run's adapter and every framework task's mirror get (with a history folder, the journal and the
 * ledger are on unless turned off). Constructing a probe adapter checks the options it shares.
 */
export function resolveBatchOptions(options: BatchOptions, list: readonly (BatchTask | FrameworkTask)[]) {
  const {
    concurrency = OPTION_DEFAULTS.concurrency,
    perRun,
    total,
    retry,
    historyDir,
    store,
    batchId,
    historyDurability,
    historyGroupCommit,
    overwriteHistory = OPTION_DEFAULTS.overwriteHistory,
    progress: showProgress = OPTION_DEFAULTS.progress,
    logger,
    cancelGraceMs = OPTION_DEFAULTS.cancelGraceMs,
    clock = Date.now,
    sleep,
    random,
    pricing,
    onUnknownCost,
    billing,
    toolConcurrency,
    externalBudgets,
    journal: journalGiven,
    ledger: ledgerGiven,
    ledgerDefaultMaxCostUsd,
    minOutputTokens,
    resume = OPTION_DEFAULTS.resume,
    salvage = OPTION_DEFAULTS.salvage,
    resumeTools,
    table,
    approve,
    approvalTimeoutMs,
    onPause,
    compact,
  } = options;
  const frameworkTask = list.find(isFrameworkTask);
  if (frameworkTask !== undefined) assertFrameworkTasksCanHonour(options, frameworkTask.id);
  if (!(typeof concurrency === 'number' && Number.isInteger(concurrency) && concurrency > 0)) {
    throw new InvalidArgumentError('concurrency', 'a positive integer', concurrency);
  }
  assertBudgetLimits(perRun, 'perRun');
  const { caps, whenSpent } = splitTotal(total, onPause, frameworkTask?.id);
  assertPricing(pricing);
  if (pricing === undefined) assertPricedCaps(perRun, caps);
  assertTasksBoundCalls(list, perRun, caps, compact === true);
  if (historyDir !== undefined && (typeof historyDir !== 'string' || historyDir === ''))
    throw new InvalidArgumentError('historyDir', 'a directory path', historyDir);
  if (historyDurability !== undefined && !(['none', 'turn', 'move'] as unknown[]).includes(historyDurability)) {
    throw new InvalidArgumentError('historyDurability', "'none', 'turn' or 'move'", historyDurability);
  }
  groupCommitBounds(historyGroupCommit, 'historyGroupCommit');
  if (typeof overwriteHistory !== 'boolean')
    throw new InvalidArgumentError('overwriteHistory', 'true or false', overwriteHistory);
  if (typeof resume !== 'boolean') throw new InvalidArgumentError('resume', 'true or false', resume);
  assertStoreOptions(store, batchId, historyDir, resume);
  if (resume && historyDir === undefined && store === undefined)
    throw new InvalidArgumentError(
      'resume',
      'false unless `historyDir` names the folder of the batch to resume (or `store` and `batchId` its batch in a store)',
      resume,
    );
  if (typeof salvage !== 'boolean') throw new InvalidArgumentError('salvage', 'true or false', salvage);
  if (salvage && !resume)
    throw new InvalidArgumentError(
      'salvage',
      'left out (or false) unless `resume` is true: it reads past damaged lines of the files a resume reads (to read a damaged file, use `loadHistory(file, { salvage: true })` or `npx agent-sm inspect <folder> --salvage`)',
      salvage,
    );
  resolveResumeTools(resumeTools);
  // Only a resumed run serves recorded calls: without `resume` the policy would be dropped unseen.
  if (resumeTools !== undefined && !resume)
    throw new InvalidArgumentError(
      'resumeTools',
      'left out unless `resume` is true: it says which recorded tool calls a resumed run serves, runs again or answers as interrupted, and a batch that does not resume serves none',
      resumeTools,
    );
  assertBatchHooks(options, showProgress, frameworkTask !== undefined);
  // Where the runs' lines are kept: a folder or a store.
  const kept = historyDir !== undefined || store !== undefined;
  const { journal, ledger } = keptLines(journalGiven, ledgerGiven, kept);
  // The options every run's adapter gets; constructing one checks them all, with their names.
  const adapterOptions = {
    retry,
    cancelGraceMs,
    clock,
    ...(logger === undefined ? {} : { logger }),
    ...(sleep === undefined ? {} : { sleep }),
    ...(random === undefined ? {} : { random }),
    ...(pricing === undefined ? {} : { pricing }),
    ...(onUnknownCost === undefined ? {} : { onUnknownCost }),
    ...(billing === undefined ? {} : { billing }),
    ...(toolConcurrency === undefined ? {} : { toolConcurrency }),
    ...(externalBudgets === undefined ? {} : { externalBudgets }),
    ...(journal === undefined ? {} : { journal }),
    ...(ledger === undefined ? {} : { ledger }),
    ...(ledgerDefaultMaxCostUsd === undefined ? {} : { ledgerDefaultMaxCostUsd }),
    ...(minOutputTokens === undefined ? {} : { minOutputTokens }),
    ...(table === undefined ? {} : { table }),
    ...(approve === undefined ? {} : { approve }),
    // Beside framework tasks with no policy, the timeout is theirs (their frameworks ask); an adapter run never waits then.
    ...(approvalTimeoutMs === undefined || (approve === undefined && frameworkTask !== undefined)
      ? {}
      : { approvalTimeoutMs }),
    ...(compact === undefined ? {} : { compact }),
  };
  // The probe has the sink every run has, so that the journal's need of one is checked too.
  new AgentWithStateMachine(PROBE_AGENT, kept ? { ...adapterOptions, sink: PROBE_SINK } : adapterOptions);
  // What a framework task's mirror takes of them: the rest were refused above when given.
  const mirrorOptions = {
    clock,
    ...(logger === undefined ? {} : { logger }),
    ...(pricing === undefined ? {} : { pricing }),
    ...(onUnknownCost === undefined ? {} : { onUnknownCost }),
    ...(billing === undefined ? {} : { billing }),
    ...(externalBudgets === undefined ? {} : { externalBudgets }),
    ...(journal === undefined ? {} : { journal }),
    ...(ledger === undefined ? {} : { ledger }),
    ...(approve === undefined ? {} : { approve }),
    ...(approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs }),
  };
  // The options runBatch itself reads, their defaults filled in here alone.
  const defaulted = { concurrency: concurrency as number, overwriteHistory, showProgress, clock, resume, salvage };
  return { adapterOptions, mirrorOptions, caps, whenSpent, defaulted };
}

/**
 * `total`'s caps (checked as `BudgetLimits`) apart from `whenSpent`, checked: `'pause'` needs a
 * strict `maxCostUsd`, and no `wrapUp` (a run that would wrap up within the cap pauses instead)
 * nor framework task (a framework's loop cannot wait at a call it was refused). `onPause` needs it.
 */
function splitTotal(
  total: BatchOptions['total'],
  onPause: BatchOptions['onPause'],
  frameworkTaskId: string | undefined,
): { caps: BudgetLimits; whenSpent: 'pause' | 'stop' | undefined } {
  const isObject = typeof total === 'object' && total !== null && !Array.isArray(total);
  const { whenSpent, ...caps } = (isObject ? total : {}) as NonNullable<BatchOptions['total']>;
  assertBudgetLimits(isObject ? caps : total, 'total');
  if (whenSpent !== undefined && whenSpent !== 'pause' && whenSpent !== 'stop')
    throw new InvalidArgumentError('total.whenSpent', "'pause' or 'stop'", whenSpent);
  if (whenSpent === 'pause') {
    if (caps.maxCostUsd === undefined || caps.strict === false)
      throw new InvalidArgumentError(
        'total.whenSpent',
        "left out (or 'stop') unless `total.maxCostUsd` is set and strict: only a cap that holds each call before it starts can pause it",
        whenSpent,
      );
    if (caps.wrapUp !== undefined)
      throw new InvalidArgumentError(
        'total.wrapUp',
        "left out when `total.whenSpent` is 'pause': a run at the cap waits for a raise instead of wrapping up",
        caps.wrapUp,
      );
    if (frameworkTaskId !== undefined)
      throw new InvalidArgumentError(
        'total.whenSpent',
        `left out (or 'stop') when runBatch() runs a framework task (\`${frameworkTaskId}\`): a framework's loop cannot wait at a call its cap refused`,
        whenSpent,
      );
  }
  if (onPause !== undefined && typeof onPause !== 'function')
    throw new InvalidArgumentError('onPause', 'a function ({ capUsd, spentUsd, heldUsd, raise }) => void', onPause);
  if (onPause !== undefined && whenSpent !== 'pause')
    throw new InvalidArgumentError('onPause', "left out unless `total.whenSpent` is 'pause'", onPause);
  return { caps, whenSpent };
}

/** Where to get `pricing`, as the refusals of a batch without it say. */
const GET_PRICING = `pass \`pricing\`, ${PRICING_EXPECTED} (createPricing needs the @pydantic/genai-prices package)`;

/**
 * With no `pricing`, refuses before any run starts the caps every run would end `error` under
 * at its first call: a strict dollar cap (strict by default) holds each call's worst case in
 * dollars before it starts, and a `wrapUp` its final call's (unless `finalCallUsd` says it), and
 * neither can be priced — `onUnknownCost` does not change that. A cap with `strict: false` is
 * left alone: a loop that reports `costUsd` (or `onUnknownCost`) serves it.
 */
function assertPricedCaps(perRun: BudgetLimits | undefined, total: BudgetLimits): void {
  for (const [name, limits] of [
    ['perRun', perRun],
    ['total', total],
  ] as const) {
    const wrapUp = limits?.wrapUp;
    if (wrapUp !== undefined && (wrapUp === true || wrapUp.finalCallUsd === undefined))
      throw new InvalidArgumentError(
        'pricing',
        `a function pricing the calls, since \`${name}.wrapUp\` is set: the worst case of each call and of the final one is held in dollars, so without it every run would end in error before its first call; ${GET_PRICING} (or give \`${name}.wrapUp.finalCallUsd\`, with \`strict: false\`)`,
        undefined,
      );
    if (isStrictCap(limits))
      throw new InvalidArgumentError(
        'pricing',
        `a function pricing the calls, since \`${name}.maxCostUsd\` is a strict cap (caps are strict by default): each call's worst case is held in dollars before it starts, so without it every run would end in error at its first call, whatever \`onUnknownCost\` says; ${GET_PRICING}, or set \`strict: false\` beside \`maxCostUsd\` when your loop reports costUsd`,
        undefined,
      );
  }
}

/** A store takes the place of `historyDir`; what it cannot do yet is refused by name. */
function assertStoreOptions(store: unknown, batchId: unknown, historyDir: unknown, resume: boolean): void {
  if (batchId !== undefined && (typeof batchId !== 'string' || batchId === ''))
    throw new InvalidArgumentError('batchId', 'a non-empty string', batchId);
  if (store === undefined) {
    if (batchId !== undefined) throw new InvalidArgumentError('batchId', 'left out unless `store` is given', batchId);
    return;
  }
  const s = store as Partial<RunStore> | null;
  if (typeof s !== 'object' || s === null || typeof s.openBatch !== 'function')
    throw new InvalidArgumentError('store', 'a RunStore (such as new PostgresStore(url))', store);
  if (historyDir !== undefined)
    throw new InvalidArgumentError(
      'historyDir',
      'left out when `store` is given: the runs are kept in the store, not in files',
      historyDir,
    );
  if (resume && batchId === undefined)
    throw new InvalidArgumentError(
      'resume',
      'false with `store` unless `batchId` names the batch to resume (the id its report gave)',
      resume,
    );
}

/** The batch's callbacks and its signal, each checked by name. */
function assertBatchHooks(options: BatchOptions, showProgress: unknown, frameworkTasks: boolean): void {
  const { signal, onProgress, onApproval, approve, onRun } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'an AbortSignal', signal);
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw new InvalidArgumentError('onProgress', 'a function (progress) => void', onProgress);
  if (typeof showProgress !== 'boolean')
    throw new InvalidArgumentError(
      'progress',
      'true or false (a progress line on standard error, drawn when it is a terminal)',
      showProgress,
    );
  if (onApproval !== undefined && typeof onApproval !== 'function')
    throw new InvalidArgumentError(
      'onApproval',
      'a function ({ id, index, calls, approve, deny }) => void',
      onApproval,
    );
  // A framework task's own approvals (AI SDK `needsApproval`) reach `onApproval` without a policy.
  if (onApproval !== undefined && approve === undefined && !frameworkTasks)
    throw new InvalidArgumentError(
      'approve',
      'an approval policy when onApproval is set (or a framework task, whose framework asks for approval itself)',
      approve,
    );
  if (onRun !== undefined && typeof onRun !== 'function')
    throw new InvalidArgumentError('onRun', 'a function ({ id, index, agent }) => (() => void) | void', onRun);
}

/** The journal and the ledger of every run: on by default where the runs' lines are kept, refused where they are not. */
function keptLines(
  journalGiven: BatchOptions['journal'],
  ledgerGiven: BatchOptions['ledger'],
  kept: boolean,
): { journal: BatchOptions['journal']; ledger: BatchOptions['ledger'] } {
  if (journalGiven !== undefined && journalGiven !== false && !kept) {
    throw new InvalidArgumentError(
      'journal',
      "left out (or false) unless `historyDir` is set: the journal is kept in each run's history file",
      journalGiven,
    );
  }
  if (ledgerGiven === true && !kept)
    throw new InvalidArgumentError(
      'ledger',
      "left out (or false) unless `historyDir` is set: the ledger is kept in each run's history file",
      ledgerGiven,
    );
  // Durable by default: with a folder, a killed batch can be resumed without paying again for answered calls.
  return { journal: journalGiven ?? (kept ? true : undefined), ledger: ledgerGiven ?? (kept ? true : undefined) };
}

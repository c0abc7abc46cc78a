import type { StateName } from '../../../states/StateName';
import { billingRules } from '../money/providerBilling';
import type { AgentLoop } from '../AgentLoop';
import { isAgentLogger, type AgentLogger } from '../AgentLogger';
import { assertBoundsCalls } from '../options/assertBoundsCalls';
import { Budget } from '../money/Budget';
import { getDefaultLogger } from '../../machine/defaultLogger';
import { resolveLedger } from '../money/resolveLedger';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { sleep as realSleep } from '../../internal/sleep';
import { makeAgentMachine } from '../journal/makeAgentMachine';
import { assertExternalBudgets } from '../money/assertExternalBudgets';
import { resumeRecording } from '../journal/RunRecording';
import type { TurnSettings } from '../turn/TurnScope';
import { assertTableCarries, tableForOptions } from '../endings/requiredEdges';
import { assertEndings, wrapUpAsked } from '../endings/assertEndings';
import type { TransitionTable } from '../../machine/TransitionTable';
import { assertKnownOptions } from '../../machine/assertKnownOptions';
import { AGENT_OPTION_KEYS } from '../options/optionKeys';
import { journalThrough, watchFor } from '../stall/watchFor';
import type { AgentWithStateMachineOptions } from './AgentWithStateMachineOptions';
import { asMachineLogger } from '../options/asMachineLogger';
import { assertAgentLoop } from '../options/assertAgentLoop';
import { assertNonNegative } from '../options/assertNonNegative';
import { assertPricing } from '../options/assertPricing';
import { resolveJournal } from '../journal/resolveJournal';
import { ApprovalJournal } from '../journal/ApprovalJournal';
import { assertApprovalPolicy } from '../ApprovalGate';
import { resolveRetry } from '../retry/resolveRetry';
import { OPTION_DEFAULTS } from '../../internal/optionTable';

/** What `new AgentWithStateMachine()` makes of its options: what every turn needs, and the agent's own budget. */
export interface AgentSettings {
  settings: TurnSettings;
  budget: Budget;
}

/**
 * Checks the loop and every option of `new AgentWithStateMachine(agent, options)` by name,
 * fills in the defaults and makes the machine: the settings every turn needs. `events` is how
 * the turns reach the adapter's listeners.
 */
export function resolveAgentSettings(
  agent: AgentLoop,
  options: AgentWithStateMachineOptions,
  events: Pick<TurnSettings, 'hears' | 'emit'>,
): AgentSettings {
  assertAgentLoop(agent);
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  assertKnownOptions(options, AGENT_OPTION_KEYS, 'new AgentWithStateMachine()');
  const {
    budget,
    sharedBudgets = [],
    externalBudgets = [],
    retry = {},
    cancelGraceMs = OPTION_DEFAULTS.cancelGraceMs,
    toolConcurrency = OPTION_DEFAULTS.toolConcurrency,
    pricing,
    onUnknownCost = OPTION_DEFAULTS.onUnknownCost,
    billing,
    sleep = realSleep,
    random = Math.random,
    logger,
    journal = false,
    ledger: ledgerGiven,
    ledgerDefaultMaxCostUsd,
    minOutputTokens = OPTION_DEFAULTS.minOutputTokens,
    resumeFrom,
    resumeTools,
    table,
    approve,
    approvalTimeoutMs,
    compact = OPTION_DEFAULTS.compact,
    stall,
    // The machine's own options.
    maxHistorySize,
    clock,
    sink,
  } = options;
  assertTurnHooks(agent, compact, approve, approvalTimeoutMs);
  const ledger = resolveLedger(ledgerGiven, journal !== false && journal !== undefined);
  const stallWatch = watchFor(stall, journal, ledger);
  const ownBudget = new Budget(budget ?? {}, { label: 'budget' });
  if (!Array.isArray(sharedBudgets) || !sharedBudgets.every((b) => b instanceof Budget)) {
    throw new InvalidArgumentError('sharedBudgets', 'an array of Budget', sharedBudgets);
  }
  assertExternalBudgets(externalBudgets);
  const use = {
    approval: approve !== undefined,
    timeout: approvalTimeoutMs !== undefined,
    compaction: compact,
    stall: stallWatch !== undefined,
  };
  // No table given: the options bring the states they need. A given one must carry them (a
  // `wrapUp`'s, once the loop and pricing it needs are checked, by assertEndings).
  const machineTable =
    table === undefined
      ? tableForOptions({ ...use, wrapUp: wrapUpAsked([ownBudget, ...sharedBudgets], externalBudgets) })
      : (table as TransitionTable<string>);
  if (table !== undefined) assertTableCarries(machineTable, use, true);
  if (ownBudget.strict) assertBoundsCalls(agent, 'budget.maxCostUsd', 'agent', compact);
  for (const [i, shared] of sharedBudgets.entries())
    if (shared.strict) assertBoundsCalls(agent, `sharedBudgets[${i}] (${shared.label}) maxCostUsd`, 'agent', compact);
  if (ledgerDefaultMaxCostUsd !== undefined) assertNonNegative(ledgerDefaultMaxCostUsd, 'ledgerDefaultMaxCostUsd');
  if (!(Number.isSafeInteger(minOutputTokens) && minOutputTokens >= 1))
    throw new InvalidArgumentError('minOutputTokens', 'a positive integer', minOutputTokens);
  const resolvedRetry = resolveRetry(retry);
  assertNonNegative(cancelGraceMs, 'cancelGraceMs');
  if (!(toolConcurrency === Infinity || (Number.isInteger(toolConcurrency) && toolConcurrency >= 1))) {
    throw new InvalidArgumentError('toolConcurrency', 'a positive integer or Infinity', toolConcurrency);
  }
  assertCallHooks(pricing, onUnknownCost, sleep, random);
  const resolved = resolveLogger(logger);
  const journalOptions = resolveJournal(journal);
  const recording = resumeRecording(
    resumeFrom,
    typeof agent.acceptRecorded === 'function',
    toolConcurrency,
    resumeTools,
  );
  const { machine, writer } = makeAgentMachine(
    {
      // Undefined takes the machine's default, as an absent option does.
      maxHistorySize,
      clock,
      sink,
      table: machineTable as TransitionTable<StateName>,
      logger: resolved === undefined ? false : asMachineLogger(resolved),
    },
    journalOptions,
    ledger,
  );
  const settings: TurnSettings = {
    machine,
    agent,
    external: [...externalBudgets],
    shared: sharedBudgets,
    retry: resolvedRetry,
    cancelGraceMs,
    toolConcurrency,
    pricing,
    onUnknownCost,
    billing: billingRules(billing),
    warned: { unknownCost: false },
    sleep,
    random,
    clock: clock ?? Date.now,
    logger: resolved,
    journal: journalThrough(stallWatch, journalOptions === undefined ? undefined : writer),
    stall: stallWatch,
    ledger: writer,
    ledgerDefaultMaxCostUsd,
    minOutputTokens,
    recording,
    approval:
      approve === undefined
        ? undefined
        : {
            policy: approve,
            timeoutMs: approvalTimeoutMs,
            journal: new ApprovalJournal(resumeFrom?.journal, recording),
          },
    compact: compact ? agent.compact!.bind(agent) : undefined,
    hears: events.hears,
    emit: events.emit,
  };
  assertEndings(settings, [ownBudget, ...sharedBudgets], table !== undefined);
  return { settings, budget: ownBudget };
}

/** `compact` and `approve` with what they need of the loop and of each other. */
function assertTurnHooks(
  agent: AgentLoop,
  compact: unknown,
  approve: AgentWithStateMachineOptions['approve'],
  approvalTimeoutMs: number | undefined,
): asserts compact is boolean {
  if (typeof compact !== 'boolean') throw new InvalidArgumentError('compact', 'true or false', compact);
  if (compact && typeof agent.compact !== 'function')
    throw new InvalidArgumentError('agent.compact', 'a function (the `compact` option is on)', agent.compact);
  if (agent.compactCalls !== undefined && agent.compactCalls !== 'none' && agent.compactCalls !== 'budgeted')
    throw new InvalidArgumentError('agent.compactCalls', "'none' or 'budgeted'", agent.compactCalls);
  assertApprovalPolicy(approve);
  if (approvalTimeoutMs !== undefined) assertNonNegative(approvalTimeoutMs, 'approvalTimeoutMs');
  if (approvalTimeoutMs !== undefined && approve === undefined)
    throw new InvalidArgumentError('approve', 'an approval policy when approvalTimeoutMs is set', approve);
}

/** The functions a turn calls to price, sleep and draw, and what to do with an unknown cost. */
function assertCallHooks(pricing: unknown, onUnknownCost: unknown, sleep: unknown, random: unknown): void {
  assertPricing(pricing);
  if (!['error', 'warn', 'ignore'].includes(onUnknownCost as string))
    throw new InvalidArgumentError('onUnknownCost', "'error', 'warn' or 'ignore'", onUnknownCost);
  if (typeof sleep !== 'function')
    throw new InvalidArgumentError('sleep', 'a function (ms, signal) => Promise<void>', sleep);
  if (typeof random !== 'function') throw new InvalidArgumentError('random', 'a function returning [0, 1)', random);
}

/** The turn's logger: the one given, none (`false`), or the library's default. */
function resolveLogger(logger: unknown): AgentLogger | undefined {
  if (logger !== undefined && logger !== false && !isAgentLogger(logger)) {
    throw new InvalidArgumentError(
      'logger',
      'an object with error, warn, info and debug methods of (message, meta), or false',
      logger,
    );
  }
  return logger === false ? undefined : ((logger as AgentLogger | undefined) ?? getDefaultLogger());
}

import { resolveLedger } from '../money/resolveLedger';
import { assertPricing } from '../options/assertPricing';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { isAgentLogger } from '../AgentLogger';
import { Budget } from '../money/Budget';
import { assertBudgetLimits } from '../BudgetLimits';
import type { ExternalBudget } from '../money/ExternalBudget';
import { assertKnownOptions } from '../../machine/assertKnownOptions';
import { MIRROR_CANNOT, MIRROR_OPTION_KEYS } from '../options/optionKeys';
import { assertNonNegative } from '../options/assertNonNegative';
import { OPTION_DEFAULTS } from '../../internal/optionTable';
import type { OnUnknownCost } from '../money/priceResponse';

/** A mirror's options as these checks read them (`StepMirrorOptions`, not imported: StepMirror imports this). */
type MirrorOptions = { [K in keyof typeof MIRROR_OPTION_KEYS]?: unknown };

/**
 * Checks a mirror's options (the machine's own are the machine's to check), naming the bad
 * value, and gives back the one it defaults here: `onUnknownCost`.
 */
export function checkMirrorOptions(options: MirrorOptions): { onUnknownCost: OnUnknownCost } {
  const {
    budget,
    sharedBudgets = [],
    externalBudgets = [],
    pricing,
    onUnknownCost = OPTION_DEFAULTS.onUnknownCost,
    signal,
    earlierSpend,
    resumeFrom,
    ledger,
    ledgerDefaultMaxCostUsd,
    logger,
    journal,
    singleRun,
  } = options;
  assertBudgetLimits(budget, 'budget');
  if (!Array.isArray(sharedBudgets) || !sharedBudgets.every((b) => b instanceof Budget))
    throw new InvalidArgumentError('sharedBudgets', 'an array of Budget', sharedBudgets);
  // A framework's loop cannot wait at a call its cap refused: a pausing cap would end it instead.
  const pausing = sharedBudgets.findIndex((b) => b.pauses);
  if (pausing >= 0)
    throw new InvalidArgumentError(
      `sharedBudgets[${pausing}]`,
      "a budget that stops at its cap: a mirror cannot pause a framework's loop at a call its cap refused (whenSpent: 'pause' runs through AgentWithStateMachine only)",
      sharedBudgets[pausing]!.label,
    );
  if (
    !Array.isArray(externalBudgets) ||
    !externalBudgets.every(
      (b: unknown) =>
        typeof b === 'object' &&
        b !== null &&
        typeof (b as ExternalBudget).reserve === 'function' &&
        typeof (b as ExternalBudget).charge === 'function',
    )
  )
    throw new InvalidArgumentError('externalBudgets', 'an array of { reserve(kind), charge(delta) }', externalBudgets);
  assertPricing(pricing);
  if (!['error', 'warn', 'ignore'].includes(onUnknownCost as string))
    throw new InvalidArgumentError('onUnknownCost', "'error', 'warn' or 'ignore'", onUnknownCost);
  if (singleRun !== undefined && typeof singleRun !== 'boolean')
    throw new InvalidArgumentError('singleRun', 'true or false', singleRun);
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'an AbortSignal', signal);
  if (logger !== undefined && logger !== false && !isAgentLogger(logger))
    throw new InvalidArgumentError('logger', 'an object with error, warn, info and debug methods, or false', logger);
  resolveLedger(ledger, journal !== undefined && journal !== false);
  if (ledgerDefaultMaxCostUsd !== undefined) assertNonNegative(ledgerDefaultMaxCostUsd, 'ledgerDefaultMaxCostUsd');
  if (earlierSpend !== undefined && (typeof earlierSpend !== 'object' || earlierSpend === null))
    throw new InvalidArgumentError('earlierSpend', 'an object of usage totals (costUsd, llmCalls, …)', earlierSpend);
  if (resumeFrom !== undefined && earlierSpend !== undefined)
    throw new InvalidArgumentError(
      'earlierSpend',
      'left out when `resumeFrom` is given (its `usage` is the earlier spend)',
      earlierSpend,
    );
  return { onUnknownCost: onUnknownCost as OnUnknownCost };
}

/**
 * Refuses options given beside a mirror: that mirror's options were fixed when it was made, and
 * a budget given here would go unused (a `maxLlmCalls: 0` beside a mirror once let two model
 * calls through). `where` names the integration.
 */
export function assertNothingBeside(rest: MirrorOptions, where: string): void {
  assertKnownOptions(rest, MIRROR_OPTION_KEYS, where, MIRROR_CANNOT);
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    throw new InvalidArgumentError(
      key,
      `left out of ${where} when \`mirror\` is given: that mirror's options were fixed by new StepMirror(), so give \`${key}\` there (or leave out \`mirror\`)`,
      value,
    );
  }
}

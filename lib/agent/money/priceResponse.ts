import { USAGE_BOUNDS } from '../../internal/usageBounds';
import type { Pricing, Usage } from '../AgentLoop';
import { OperationError } from '../TurnError';

/** What to do when `maxCostUsd` (or `maxTokens`) is set and a response's cost (or tokens) is unknown. */
export type OnUnknownCost = 'error' | 'warn' | 'ignore';

/** What `priceResponse` needs besides the response: the prices, and which caps are set. */
export interface PricePolicy {
  pricing: Pricing | undefined;
  onUnknownCost: OnUnknownCost;
  /** Whether some budget caps dollars (`maxCostUsd`). */
  capsCost: boolean;
  /** Whether some budget caps tokens (`maxTokens`). */
  capsTokens: boolean;
}

/** A response's cost, and what is wrong with it: `error` ends the turn, `note` is kept in the record. */
export interface PricedResponse {
  costUsd?: number;
  error?: OperationError;
  /** Under `onUnknownCost: 'warn'`: why a cap cannot be enforced for this response. */
  note?: string;
}

/**
 * Pure but for `pricing`: the cost of one response, reported or priced from its tokens, or
 * unknown — which is an error when a cost cap is set, unless `onUnknownCost` allows it.
 * `operation` names the call in messages.
 */
export function priceResponse(
  usage: Usage,
  model: string | undefined,
  operation: string,
  policy: PricePolicy,
): PricedResponse {
  const priced = priceUsage(usage, model, policy.pricing);
  if (priced.error !== undefined) return priced;
  const { costUsd } = priced;
  const tokens = usage.inputTokens !== undefined || usage.outputTokens !== undefined;
  let unknown: string | undefined;
  if (costUsd === undefined && policy.capsCost) {
    const what = !tokens
      ? 'no usage'
      : usage.inputTokens === undefined || usage.outputTokens === undefined
        ? `incomplete usage (${usage.inputTokens ?? 'no'} input tokens, ${usage.outputTokens ?? 'no'} output tokens)`
        : `${usage.inputTokens + usage.outputTokens} tokens (${usage.inputTokens} in, ${usage.outputTokens} out)`;
    unknown = `${operation} reported ${what} but no costUsd for model ${model ?? '(not reported)'}, and ${policy.pricing === undefined ? 'no pricing option is set' : 'pricing returned undefined'}: maxCostUsd cannot be enforced`;
  } else if (!tokens && policy.capsTokens) {
    unknown = `${operation} reported no tokens (model ${model ?? '(not reported)'}): maxTokens cannot be enforced`;
  }
  if (unknown === undefined || policy.onUnknownCost === 'ignore') return priced;
  if (policy.onUnknownCost === 'error')
    return {
      ...priced,
      error: new OperationError('cost', new Error(`${unknown} (set pricing, or onUnknownCost: 'warn' or 'ignore')`)),
    };
  return { ...priced, note: unknown };
}

/**
 * The cost `usage` reports, or else what `pricing` computes from it (undefined when neither
 * knows). A pricing function that throws or answers anything but a non-negative number of
 * dollars or undefined is an `OperationError` naming `pricing`.
 */
export function priceUsage(
  usage: Usage,
  model: string | undefined,
  pricing: Pricing | undefined,
): { costUsd?: number; error?: OperationError } {
  if (usage.costUsd !== undefined || pricing === undefined)
    return usage.costUsd === undefined ? {} : { costUsd: usage.costUsd };
  // A count the response did not report is unknown, never zero: priced from what is missing,
  // a response without usage would cost $0. Its cost stays unknown (charged at its hold).
  if (usage.inputTokens === undefined || usage.outputTokens === undefined) return {};
  let priced: unknown;
  try {
    priced = pricing(usage, { model });
  } catch (error) {
    return { error: new OperationError('pricing', error) };
  }
  if (priced === undefined) return {};
  if (!(
    typeof priced === 'number' &&
    Number.isFinite(priced) &&
    priced >= 0 &&
    priced <= USAGE_BOUNDS.responseCostUsd
  )) {
    return {
      error: new OperationError(
        'pricing',
        new Error(
          `returned ${String(priced)} for model ${model ?? '(none)'}, expected a non-negative number of USD${typeof priced === 'number' && priced > USAGE_BOUNDS.responseCostUsd ? ` (at most ${USAGE_BOUNDS.responseCostUsd}, the stated bound for one response)` : ''} or undefined`,
        ),
      ),
    };
  }
  return { costUsd: priced };
}

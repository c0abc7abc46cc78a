import { responseUsage } from '../../internal/fieldLists';
import type { CompactResult } from '../AgentLoop';
import { splitUsage } from '../turn/checkAgentOutput';
import { priceResponse } from '../money/priceResponse';
import { ContractViolationError, type OperationError } from '../TurnError';
import type { TurnScope } from '../turn/TurnScope';

/**
 * Charges what a compaction's summarising LLM call made outside `ctx.llm` reported, after the
 * fact: one LLM call, its tokens, its cost (reported, or priced by `pricing`, with the
 * unknown-cost rule). Under a strict cap, which could not hold it, the turn then ends in error.
 * A compaction that made no call (it only dropped messages) charges nothing. Returns the
 * record's data, or the error that ends the turn.
 */
export function chargeCompaction(
  scope: TurnScope,
  value: unknown,
): { data: Record<string, unknown>; error?: OperationError | ContractViolationError } {
  if (value === undefined) return { data: {} };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return {
      data: {},
      error: new ContractViolationError(
        'compact',
        'it must resolve to undefined or { usage?, model?, removedMessages? }',
        value,
      ),
    };
  const { usage, model, removedMessages } = value as CompactResult;
  const data: Record<string, unknown> = {};
  if (typeof removedMessages === 'number') data['removedMessages'] = removedMessages;
  if (usage === undefined) return { data };
  const { settings: s, meter } = scope;
  const { valid, problems } = splitUsage(usage);
  const priced = priceResponse(valid, typeof model === 'string' ? model : undefined, 'compact', {
    pricing: s.pricing,
    onUnknownCost: s.onUnknownCost,
    capsCost: meter.caps('maxCostUsd'),
    capsTokens: meter.caps('maxTokens'),
  });
  meter.charge({ llmCalls: 1, ...responseUsage(valid, priced.costUsd) });
  data['compactionUsage'] = priced.costUsd === undefined ? valid : { ...valid, costUsd: priced.costUsd };
  if (problems.length > 0) data['usageProblems'] = problems;
  if (model !== undefined) data['model'] = model;
  // Charged all the same (it was spent), but a strict cap could not hold it: the run ends.
  if (meter.strict)
    return {
      data,
      error: new ContractViolationError(
        'compact',
        'it reported the usage of an LLM call made outside ctx.llm, which a strict maxCostUsd cannot hold: make the call through ctx.llm',
        usage,
      ),
    };
  return priced.error === undefined ? { data } : { data, error: priced.error };
}

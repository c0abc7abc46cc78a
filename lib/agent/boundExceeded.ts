import { formatUsd } from '../internal/formatUsd';
import type { LLMCallBound, Usage } from './AgentLoop';

/**
 * The fact of a response that used more output tokens than its request's bound allowed: the
 * server ignored the request's max tokens. Kept in the attempt's journal (or ledger) line and
 * in the record of the move that ends the run.
 */
export interface BoundExceeded {
  /** The output tokens the response reported. */
  outputTokens: number;
  /** The request's max output tokens: its bound. */
  maxOutputTokens: number;
  /** `outputTokens - maxOutputTokens`. */
  overshootTokens: number;
  /** What the response cost past its worst case (USD), when both are known. */
  overshootUsd?: number;
}

/**
 * Pure: the fact when `usage` reports more output tokens than `bound` allowed, else undefined.
 * `costUsd` is what the response was charged, `worstUsd` its worst case (the hold).
 */
export function boundExceeded(
  bound: LLMCallBound | undefined,
  usage: Usage,
  costUsd: number | undefined,
  worstUsd: number | undefined,
): BoundExceeded | undefined {
  const output = usage.outputTokens;
  if (bound === undefined || output === undefined || output <= bound.maxOutputTokens) return undefined;
  const fact: BoundExceeded = {
    outputTokens: output,
    maxOutputTokens: bound.maxOutputTokens,
    overshootTokens: output - bound.maxOutputTokens,
  };
  if (costUsd !== undefined && worstUsd !== undefined && costUsd > worstUsd) fact.overshootUsd = costUsd - worstUsd;
  return fact;
}

/** Why a strict cap stops at such a response, with the overshoot: what the run's end and the batch's stop say. */
export function boundExceededMessage(fact: BoundExceeded): string {
  const usd = fact.overshootUsd === undefined ? '' : `, ${formatUsd(fact.overshootUsd)} past its worst case`;
  return `the response used ${fact.outputTokens} output tokens, past its bound of ${fact.maxOutputTokens} (${fact.overshootTokens} over${usd}): the server ignores max tokens; the cap cannot be kept, so the batch stops`;
}

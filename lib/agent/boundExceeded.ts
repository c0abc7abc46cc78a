import { formatUsd } from '../internal/formatUsd';
import type { LLMCallBound, Usage } from './AgentLoop';

/**
 * The fact of a response that used more than its request's bound allowed: more output tokens
 * than its max (the server ignored max tokens), more input tokens than the bound's (the server
 * counted more than the request holds, or its server tools added to it), or a cost past the
 * worst case that was held for it. Kept in the attempt's journal (or ledger) line and in the
 * record of the move that ends the run. Each side is present only when it was passed.
 */
export interface BoundExceeded {
  /** The output tokens the response reported, when past `maxOutputTokens`. */
  outputTokens?: number;
  /** The request's max output tokens: its bound. */
  maxOutputTokens?: number;
  /** `outputTokens - maxOutputTokens`. */
  overshootTokens?: number;
  /** The input tokens the response reported, when past `maxInputTokens`. */
  inputTokens?: number;
  /** The bound's input tokens (`LLMCallBound.inputTokens`). */
  maxInputTokens?: number;
  /** `inputTokens - maxInputTokens`. */
  inputOvershootTokens?: number;
  /** What the response cost past its worst case (USD), when both are known. */
  overshootUsd?: number;
}

/**
 * Pure: the fact when `usage` reports more output or input tokens than `bound` allowed, or
 * `costUsd` (what the response was charged) passes `worstUsd` (its worst case, the hold); else
 * undefined. Without a bound there is nothing to pass.
 */
export function boundExceeded(
  bound: LLMCallBound | undefined,
  usage: Usage,
  costUsd: number | undefined,
  worstUsd: number | undefined,
): BoundExceeded | undefined {
  if (bound === undefined) return undefined;
  const output = usage.outputTokens;
  const input = usage.inputTokens;
  const outputPast = output !== undefined && output > bound.maxOutputTokens;
  const inputPast = input !== undefined && input > bound.inputTokens;
  const costPast = costUsd !== undefined && worstUsd !== undefined && costUsd > worstUsd;
  if (!outputPast && !inputPast && !costPast) return undefined;
  const fact: BoundExceeded = {};
  if (outputPast) {
    fact.outputTokens = output;
    fact.maxOutputTokens = bound.maxOutputTokens;
    fact.overshootTokens = output - bound.maxOutputTokens;
  }
  if (inputPast) {
    fact.inputTokens = input;
    fact.maxInputTokens = bound.inputTokens;
    fact.inputOvershootTokens = input - bound.inputTokens;
  }
  if (costPast) fact.overshootUsd = costUsd - worstUsd;
  return fact;
}

/** Why a strict cap stops at such a response, with the overshoot: what the run's end and the batch's stop say. */
export function boundExceededMessage(fact: BoundExceeded): string {
  return `${boundExceededWords(fact)}; the cap cannot be kept, so the batch stops`;
}

/** What passed its bound and by how much, and why it could: what a warning says when no strict cap stops the run. */
export function boundExceededWords(fact: BoundExceeded): string {
  const usd = fact.overshootUsd === undefined ? undefined : `${formatUsd(fact.overshootUsd)} past its worst case`;
  const parts: string[] = [];
  const causes: string[] = [];
  if (fact.overshootTokens !== undefined) {
    parts.push(
      `${fact.outputTokens} output tokens, past its bound of ${fact.maxOutputTokens} (${fact.overshootTokens} over`,
    );
    causes.push('the server ignores max tokens');
  }
  if (fact.inputOvershootTokens !== undefined) {
    parts.push(
      `${fact.inputTokens} input tokens, past its bound of ${fact.maxInputTokens} (${fact.inputOvershootTokens} over`,
    );
    causes.push('the server counted more input than the request holds (or its server tools added to it)');
  }
  if (parts.length === 0)
    return `the response cost ${usd ?? 'more than its worst case'}: its bound or pricing is too low`;
  // The dollars go with the last part: `(900 over, $0.0036 past its worst case)`.
  const used = parts.map((p, i) => `${p}${i === parts.length - 1 && usd !== undefined ? `, ${usd}` : ''})`);
  return `the response used ${used.join(' and ')}: ${causes.join('; ')}`;
}

/**
 * What makes a usage field grow:
 * - `response`: an LLM response reports it (the `Usage` field of the same name), charged after the call;
 * - `llm`, `tool`: one per call of that kind, counted when the call starts (`ExternalBudget.reserve(kind)`);
 * - `time`: the clock.
 */
export type UsageGrowth = 'response' | 'llm' | 'tool' | 'time';

/** How one usage field is counted and where it is kept. */
export interface UsageFieldSpec {
  readonly grows: UsageGrowth;
  /** Dollars: sums are rounded to 1e-10 (so cents do not add up to 0.21000000000000002) and Redis adds them as floats. Otherwise whole numbers. */
  readonly dollars?: true;
  /**
   * Its short name in compact storage: the field of its counter in a distributed batch's Redis
   * hashes. For `time`, the field of the batch's start, from which Redis's clock tells the time.
   */
  readonly code: string;
}

/**
 * Every usage field, in the order of `UsageTotals`: the one list that charging, totals, the
 * distributed batch's Redis hashes and scripts, and the reports are derived from (through
 * fieldLists.ts). A field's doc comment is its doc in `UsageTotals`. Adding one here adds it to
 * all of them; a limit on it is an entry in `LIMITS`. Data only, never frozen: a test swaps in
 * a longer list and checks that every consumer follows.
 */
export const USAGE_FIELDS = {
  /** Input tokens, cached or not. */
  inputTokens: { grows: 'response', code: 'i' },
  /** Output tokens, reasoning included. */
  outputTokens: { grows: 'response', code: 'o' },
  /** US dollars. */
  costUsd: { grows: 'response', code: 'c', dollars: true },
  /** Tool calls, counted as they start. */
  toolCalls: { grows: 'tool', code: 't' },
  /** LLM calls, counted as they start: each attempt of a retried call counts. */
  llmCalls: { grows: 'llm', code: 'l' },
  /** Time spent inside turns, in milliseconds. */
  wallMs: { grows: 'time', code: 'st' },
} as const satisfies Record<string, UsageFieldSpec>;

/** The name of one usage field: a key of `UsageTotals`. */
export type UsageFieldName = keyof typeof USAGE_FIELDS;

/** The fields an LLM response reports. */
export type ResponseFieldName = {
  [K in UsageFieldName]: (typeof USAGE_FIELDS)[K]['grows'] extends 'response' ? K : never;
}[UsageFieldName];

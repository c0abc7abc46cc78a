/**
 * What makes a usage field grow:
 * - `response`: an LLM response reports it (the `Usage` field of the same name), charged after the call;
 * - `llm`, `tool`: one per call of that kind, counted when the call starts (`ExternalBudget.reserve(kind)`);
 * - `charge`: the charge rule, as an LLM call ends (what a response cannot report: money that may have been billed, or was provably not);
 * - `time`: the clock.
 */
export type UsageGrowth = 'response' | 'charge' | 'llm' | 'tool' | 'time';

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
  /**
   * US dollars charged: billed (priced from usage the provider reported) plus uncertain. What
   * `maxCostUsd` counts.
   */
  costUsd: { grows: 'response', code: 'c', dollars: true },
  /**
   * Of `costUsd`, the uncertain part: requests that may have been billed but whose usage never
   * came back (a 5xx, a timeout, a cut stream, a crash, a response without usage, a price the
   * table lacks), each charged at its hold, its worst case. Billed is `costUsd − uncertainUsd`.
   */
  uncertainUsd: { grows: 'charge', code: 'cu', dollars: true },
  /**
   * US dollars held and let go: requests provably not billed (never sent, or answered with a
   * failure the provider documents as unbilled, such as a 429). Not in `costUsd`, and no cap counts it.
   */
  releasedUsd: { grows: 'charge', code: 'cr', dollars: true },
  /**
   * LLM calls that may have been billed but whose cost is unknown and was not held: a response
   * with no price (no \`pricing\`, or a model it lacks) and no cap to hold its worst case, or a
   * failure after the request left with nothing held. Their money is in no dollar figure, so
   * \`costUsd\` is at least what it says, never all of it.
   */
  unpricedCalls: { grows: 'charge', code: 'cn' },
  /** Tool calls, counted as they start. */
  toolCalls: { grows: 'tool', code: 't' },
  /** LLM calls, counted as they start: each attempt of a retried call counts. */
  llmCalls: { grows: 'llm', code: 'l' },
  /** Time spent inside turns, in milliseconds. */
  wallMs: { grows: 'time', code: 'st' },
} as const satisfies Record<string, UsageFieldSpec>;

/** The name of one usage field: a key of `UsageTotals`. */
export type UsageFieldName = keyof typeof USAGE_FIELDS;

/** The fields an LLM call's charge carries: what its response reports, and what the charge rule adds. */
export type ChargeFieldName = {
  [K in UsageFieldName]: (typeof USAGE_FIELDS)[K]['grows'] extends 'response' | 'charge' ? K : never;
}[UsageFieldName];

/** The fields an LLM response reports. */
export type ResponseFieldName = {
  [K in UsageFieldName]: (typeof USAGE_FIELDS)[K]['grows'] extends 'response' ? K : never;
}[UsageFieldName];

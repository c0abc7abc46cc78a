/** What a tool result says in the final call when the real one would not fit in the cap. */
export const BUDGET_RAN_OUT = 'not sent: the budget ran out before this result could be sent';

/** How a final call after tool calls carries their results: the real ones, `withheld` (answers saying the budget ran out), or also `withoutLastRound`. */
export interface FinalForm {
  readonly withheld?: string;
  readonly withoutLastRound?: true;
}

/**
 * The forms a final call after tool calls tries in turn, for the adapter and the mirror alike:
 * the first that fits in the cap is sent. The reserve bounds the response's tokens, not the
 * messages a round adds around them (its tool calls' ids and names, the results' envelopes):
 * with a small max output those can outgrow it even with the results withheld. Without the last
 * round, the request is the one the final call's hold was worked out from (as a final call), so the last
 * form always fits and is sent unchecked. Bounded only for a final call, never an ordinary one.
 */
export const FINAL_FORMS: readonly FinalForm[] = Object.freeze([
  Object.freeze({}),
  Object.freeze({ withheld: BUDGET_RAN_OUT }),
  Object.freeze({ withheld: BUDGET_RAN_OUT, withoutLastRound: true as const }),
]);

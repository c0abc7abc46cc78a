/**
 * What a run spent, by the money ledger's rule: the costs recorded, plus the worst case of each
 * reservation without a response (the provider may have billed it). Without ledger lines it is
 * the cost the records carry.
 */
export interface RunSpend {
  /** USD charged, billed plus uncertain: never below the cost the records carry. */
  readonly costUsd: number;
  /**
   * Of `costUsd`, USD that may have been billed but whose usage never came back: calls charged at
   * their hold, and reservations without a response at their worst case. Billed is the rest.
   */
  readonly uncertainUsd: number;
  /** USD held and let go: calls provably not billed (never sent, or a failure the provider does not bill). */
  readonly releasedUsd: number;
  /** Why money is uncertain, most calls first: each reason and how many calls it covers. */
  readonly uncertain: ReadonlyArray<{ readonly why: string; readonly calls: number }>;
  /**
   * LLM calls that may have been billed at a cost nobody knows (no price, no hold): in none of
   * the dollars above, which are then at least what the run spent. Never taken for $0.
   */
  readonly unpricedCalls: number;
  /** Why their cost is unknown, most calls first (from the journal's or ledger's lines; empty without them). */
  readonly unpriced: ReadonlyArray<{ readonly why: string; readonly calls: number }>;
  /** Reservations with no `llm` line after them (calls in flight when the file ended), counted at their worst case. */
  readonly openReservations: number;
  /**
   * Of those, reservations that stated no amount (cost unknown, no default): in no dollar figure,
   * so spend is at least `costUsd`; each is one of `unpricedCalls`.
   */
  readonly unpricedReservations: number;
  /** The file holds ledger lines (`reserve`). */
  readonly ledger: boolean;
}

/** What a stall detector found: which detector, why in words, and the repeated thing. */
export interface StallFinding {
  /** The detector's name: `sameToolCall`, `repeatedText`, `idleCalls`, or a custom one. */
  detector: string;
  /** Why, in words, for people and for the model: `called read_file with the same input 3 times`. */
  reason: string;
  /** The repeated call (`tool`, `input`, `count`), the repeated `text`, or a custom detector's own. */
  evidence: Record<string, unknown>;
}

/** What an open reservation (no `llm` line after it) says of its call, by whether it stated a worst case. */
export const IN_FLIGHT = {
  held: 'reserved, and no response recorded (in flight when the file ended)',
  unpriced: 'reserved with no worst case, and no response recorded (in flight when the file ended)',
} as const;

/**
 * Calls counted by why (why money is uncertain, or why a cost is unknown), those served from an
 * earlier attempt's journal (`fromJournal`) counted apart: the reasons of a run's file, and the
 * reasons of the calls its attempt made itself, which a resumed run's attempts add up.
 */
export class ReasonTally {
  readonly #all = new Map<string, number>();
  readonly #own = new Map<string, number>();

  add(why: string, served: boolean): void {
    this.#all.set(why, (this.#all.get(why) ?? 0) + 1);
    if (!served) this.#own.set(why, (this.#own.get(why) ?? 0) + 1);
  }

  /**
   * Each reason and its calls, most first: of every line (`own` false) or of the attempt's own,
   * with `open` reservations left without an answer, said as `openWhy`.
   */
  reasons(own: boolean, open: number, openWhy: string): Array<{ why: string; calls: number }> {
    const reasons = [...(own ? this.#own : this.#all)].map(([why, calls]) => ({ why, calls }));
    if (open > 0) reasons.push({ why: openWhy, calls: open });
    return reasons.sort((a, b) => b.calls - a.calls);
  }
}

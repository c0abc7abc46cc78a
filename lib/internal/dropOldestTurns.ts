/**
 * The messages left after dropping the oldest turns of a conversation, for compaction: a turn
 * starts at a message `startsTurn` says yes to (a user's own message, not a tool result), so a
 * cut there never parts a tool call from its result. Messages before the first turn (a system
 * prompt) stay, and so do the last `keep` turns (1 while a turn is in progress in `messages`).
 * Drops the older half of the rest (rounded up), at least one; `removed` is 0 when there is
 * nothing to drop. Pure.
 */
export function dropOldestTurns<M>(
  messages: readonly M[],
  startsTurn: (message: M) => boolean,
  keep: number,
): { messages: M[]; removed: number } {
  const starts: number[] = [];
  messages.forEach((m, i) => {
    if (startsTurn(m)) starts.push(i);
  });
  const droppable = starts.length - keep;
  if (droppable < 1) return { messages: [...messages], removed: 0 };
  const drop = Math.ceil(droppable / 2);
  const from = starts[0]!;
  const to = starts[drop] ?? messages.length;
  return { messages: [...messages.slice(0, from), ...messages.slice(to)], removed: to - from };
}

/**
 * A loop's `compact`: drops the oldest turns of the conversation it keeps, in place, keeping
 * the turn in progress while tool results are pending (`operation` is `sendToolResults`).
 */
export function compactTurns<M>(
  messages: M[],
  startsTurn: (message: M) => boolean,
  operation: string,
): { removedMessages: number } {
  const kept = dropOldestTurns(messages, startsTurn, operation === 'sendToolResults' ? 1 : 0);
  messages.splice(0, messages.length, ...kept.messages);
  return { removedMessages: kept.removed };
}
